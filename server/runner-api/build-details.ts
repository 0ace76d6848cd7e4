// GitLab 8.17's Entities::Build and Entities::BuildDetails, typed as the Go runner decodes them
// (ints are ints, bools are bools: its JSON decoding is strict).
import type { AppContext } from '../context.ts';
import type { Build, Variable } from '../store/ports/build.ts';
import type { Project } from '../store/ports/project.ts';
import { isoTime } from '../util/times.ts';
import { allOf, andThen, type MaybePromise } from '../domain/maybe-promise.ts';

export const GITLAB_VERSION = '8.17.0';
export const GITLAB_REVISION = 'jobscope';

function refSlug(ref: string): string {
  return ref.toLowerCase().replace(/[^a-z0-9]/g, '-').replace(/^-+|-+$/g, '').slice(0, 63);
}

// The same five for every build: shared (frozen: an answer is only serialised, never changed)
// rather than five new objects per build handed out.
const SERVER_VARIABLES: readonly Variable[] = [
  { key: 'CI', value: 'true', public: true },
  { key: 'GITLAB_CI', value: 'true', public: true },
  { key: 'CI_SERVER_NAME', value: 'GitLab', public: true },
  { key: 'CI_SERVER_VERSION', value: GITLAB_VERSION, public: true },
  { key: 'CI_SERVER_REVISION', value: GITLAB_REVISION, public: true },
].map((v) => Object.freeze(v));

/** Sent with every build handed out: one small object each, built without an intermediate list. */
function predefinedVariables(build: Build, project: Project | undefined): Variable[] {
  const out: Variable[] = [
    ...SERVER_VARIABLES,
    { key: 'CI_BUILD_ID', value: String(build.id), public: true },
    { key: 'CI_BUILD_TOKEN', value: build.token, public: false },
    { key: 'CI_BUILD_REF', value: build.sha, public: true },
    { key: 'CI_BUILD_BEFORE_SHA', value: build.before_sha, public: true },
    { key: 'CI_BUILD_REF_NAME', value: build.ref, public: true },
    { key: 'CI_BUILD_REF_SLUG', value: refSlug(build.ref), public: true },
    { key: 'CI_BUILD_NAME', value: build.name, public: true },
    { key: 'CI_BUILD_STAGE', value: build.stage, public: true },
    { key: 'CI_PROJECT_ID', value: String(build.project_id), public: true },
  ];
  if (project) out.push({ key: 'CI_PROJECT_NAME', value: project.name, public: true });
  if (build.tag) out.push({ key: 'CI_BUILD_TAG', value: build.ref, public: true });
  for (const v of build.variables) out.push(v);
  return out;
}

// Written out field by field, in GitLab's order, rather than spread from buildEntity: this runs for
// every build handed out. An absent artifacts field is undefined, which JSON leaves out as before.
const artifactsFileOf = (build: Build) => (build.artifacts_key ? { filename: build.artifacts_filename ?? 'artifacts.zip', size: build.artifacts_size ?? 0 } : undefined);

export function buildEntity(build: Build, project: Project | undefined) {
  return {
    id: build.id,
    ref: build.ref,
    tag: build.tag,
    sha: build.sha,
    status: build.status,
    name: build.name,
    token: build.token,
    stage: build.stage,
    project_id: build.project_id,
    project_name: project?.name ?? '',
    artifacts_file: artifactsFileOf(build),
  };
}

export function repoUrlOf(build: Build, project: Project | undefined, host: string): string {
  if (build.repo_url) return build.repo_url;
  const slug = (project?.name ?? `project-${build.project_id}`).toLowerCase().replace(/[^a-z0-9._-]+/g, '-');
  return `http://gitlab-ci-token:${build.token}@${host}/jobscope/${slug}.git`;
}

/**
 * `project`: the build's project when the caller has just read it (a dispatch batch reads each once).
 * At once on SQLite (no promise on the dispatch path), a promise on PostgreSQL.
 */
export function buildDetails(ctx: AppContext, build: Build, host: string, known?: { project: Project | undefined }): MaybePromise<BuildDetails> {
  const { builds, projects } = ctx.domain;
  return andThen(known ? known.project : projects.byId(build.project_id), (project) =>
    andThen(builds.byIds(build.depends_on), (deps) =>
      andThen(allOf(deps.map((d) => andThen(projects.byId(d.project_id), (p) => buildEntity(d, p)))), (depEntities) => details(build, project, depEntities, host)),
    ),
  );
}

export type BuildDetails = ReturnType<typeof details>;

function details(build: Build, project: Project | undefined, deps: ReturnType<typeof buildEntity>[], host: string) {
  return {
    id: build.id,
    ref: build.ref,
    tag: build.tag,
    sha: build.sha,
    status: build.status,
    name: build.name,
    token: build.token,
    stage: build.stage,
    project_id: build.project_id,
    project_name: project?.name ?? '',
    artifacts_file: artifactsFileOf(build),
    commands: build.commands,
    repo_url: repoUrlOf(build, project, host),
    before_sha: build.before_sha,
    // The runner decodes a bool strictly: anything else stored in options is the default.
    allow_git_fetch: typeof build.options.allow_git_fetch === 'boolean' ? build.options.allow_git_fetch : true,
    artifacts_expire_at: build.artifacts_key ? isoTime(build.artifacts_expire_at) : undefined,
    options: build.options,
    timeout: build.timeout ?? project?.build_timeout ?? 3600,
    variables: predefinedVariables(build, project),
    depends_on_builds: deps,
    credentials: [] as { type: string; url: string; username: string; password: string }[],
  };
}
