// The control API's contract: TypeBox schemas that validate requests, document the API and give
// the TypeScript types the renderer's client imports (types only, no runtime code).
import { Type, type Static } from '@sinclair/typebox';

export const Id = Type.String({ pattern: '^[0-9]{1,15}$', description: 'numeric id' });
export const IdParams = Type.Object({ id: Id });

export const NewUser = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9_.-]+$' }),
  admin: Type.Optional(Type.Boolean()),
});
export type NewUser = Static<typeof NewUser>;

export const UserView = Type.Object({ id: Type.Integer(), username: Type.String(), admin: Type.Boolean(), private_token: Type.String() });
export type UserView = Static<typeof UserView>;

export const InstanceView = Type.Object({
  version: Type.String(),
  revision: Type.String(),
  runners_registration_token: Type.String(),
  started_at: Type.String(),
  data_dir: Type.String(),
  limits: Type.Object({ max_artifact_bytes: Type.Integer(), max_trace_bytes: Type.Integer() }),
});
export type InstanceView = Static<typeof InstanceView>;

export const NewProject = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  shared_runners_enabled: Type.Optional(Type.Boolean()),
  build_timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 86400 })),
});
export type NewProject = Static<typeof NewProject>;

export const ProjectView = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  runners_token: Type.String(),
  ci_token: Type.String(),
  shared_runners_enabled: Type.Boolean(),
  build_timeout: Type.Integer(),
  created_at: Type.String(),
});
export type ProjectView = Static<typeof ProjectView>;

const VariableT = Type.Object({ key: Type.String({ minLength: 1, maxLength: 255 }), value: Type.String({ maxLength: 65536 }), public: Type.Optional(Type.Boolean()) });

export const NewBuild = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  stage: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  ref: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  sha: Type.Optional(Type.String({ pattern: '^[0-9a-f]{8,64}$', description: 'at least 8 hex characters: the runner prints sha[0:8]' })),
  before_sha: Type.Optional(Type.String({ pattern: '^[0-9a-f]{8,64}$' })),
  tag: Type.Optional(Type.Boolean()),
  commands: Type.Optional(Type.String({ maxLength: 1024 * 1024, description: 'newline-joined script lines' })),
  repo_url: Type.Optional(Type.String({ maxLength: 2048 })),
  variables: Type.Optional(
    Type.Union([
      Type.Array(VariableT, { maxItems: 500 }),
      Type.Record(Type.String(), Type.String({ maxLength: 65536 }), { maxProperties: 500, propertyNames: { maxLength: 255 } }),
    ]),
  ),
  options: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'free-form (image, services, artifacts, cache…); at most 1 MiB as JSON (any JSON body nests at most 64 deep)' })),
  timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 86400 })),
  tag_list: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 }), Type.String({ maxLength: 4096 })])),
  depends_on: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), { maxItems: 100, description: 'ids of builds whose artifacts this build downloads' })),
  count: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 10000,
      description: 'create this many identical builds (demo and load tests), all or none; the answer is then their ids. count × the size of one build is at most --max-build-batch-mb',
    }),
  ),
});
export type NewBuild = Static<typeof NewBuild>;

export const CreatedBuilds = Type.Object({
  count: Type.Integer(),
  ids: Type.Array(Type.Integer(), { description: 'the new builds, oldest first' }),
});
export type CreatedBuilds = Static<typeof CreatedBuilds>;

export const BuildStatusT = Type.Union([
  Type.Literal('pending'),
  Type.Literal('running'),
  Type.Literal('success'),
  Type.Literal('failed'),
  Type.Literal('canceled'),
]);

export const BuildQuery = Type.Object({
  status: Type.Optional(BuildStatusT),
  project_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  runner_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  before_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  private_token: Type.Optional(Type.String()),
});
export type BuildQuery = Static<typeof BuildQuery>;

export const BuildView = Type.Object({
  id: Type.Integer(),
  status: BuildStatusT,
  project_id: Type.Integer(),
  runner_id: Type.Union([Type.Integer(), Type.Null()]),
  name: Type.String(),
  stage: Type.String(),
  ref: Type.String(),
  sha: Type.String(),
  before_sha: Type.String(),
  tag: Type.Boolean(),
  commands: Type.String(),
  repo_url: Type.Union([Type.String(), Type.Null()]),
  variables: Type.Array(Type.Object({ key: Type.String(), value: Type.String(), public: Type.Boolean() })),
  options: Type.Record(Type.String(), Type.Unknown()),
  timeout: Type.Union([Type.Integer(), Type.Null()]),
  tag_list: Type.Array(Type.String()),
  depends_on: Type.Array(Type.Integer()),
  token: Type.String(),
  trace_length: Type.Integer(),
  artifacts: Type.Union([
    Type.Null(),
    Type.Object({
      filename: Type.String(),
      size: Type.Integer(),
      expire_at: Type.Union([Type.String(), Type.Null()]),
      files: Type.Optional(
        Type.Union([Type.Null(), Type.Array(Type.Object({ name: Type.String(), size: Type.Integer() }))], {
          description: 'detail only (not in lists): the first entries, within --artifact-listing-max-entries and --artifact-listing-max-name-bytes; null until listed',
        }),
      ),
      files_total: Type.Union([Type.Integer(), Type.Null()], { description: 'files in the archive, also those not kept; null until listed' }),
      files_truncated: Type.Boolean({ description: '`files` holds fewer than files_total' }),
    }),
  ]),
  created_at: Type.String(),
  started_at: Type.Union([Type.String(), Type.Null()]),
  finished_at: Type.Union([Type.String(), Type.Null()]),
  duration: Type.Union([Type.Number(), Type.Null()]),
  last_update_at: Type.Union([Type.String(), Type.Null()], {
    description:
      'running builds: when the server last heard of it (its start, its runner’s last contact, or a trace part or update this server received, the latest); null otherwise. A build silent for minutes was likely abandoned by its runner: cancel or fail it',
  }),
  project_name: Type.Optional(Type.String({ description: 'detail only (not in lists): the name of the build’s project' })),
});
export type BuildView = Static<typeof BuildView>;

export const RunnerView = Type.Object({
  id: Type.Integer(),
  description: Type.String(),
  active: Type.Boolean(),
  is_shared: Type.Boolean(),
  project_id: Type.Union([Type.Integer(), Type.Null()]),
  online: Type.Boolean(),
  run_untagged: Type.Boolean(),
  locked: Type.Boolean(),
  tag_list: Type.Array(Type.String()),
  version: Type.Union([Type.String(), Type.Null()]),
  revision: Type.Union([Type.String(), Type.Null()], { description: 'as the runner sent it in `info` (register, poll, update)' }),
  platform: Type.Union([Type.String(), Type.Null()]),
  architecture: Type.Union([Type.String(), Type.Null()]),
  last_contact_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  builds_count: Type.Integer({ description: 'builds handed to this runner, whatever their status now' }),
});
export type RunnerView = Static<typeof RunnerView>;

export const RunnerPatch = Type.Object({ active: Type.Boolean() });
