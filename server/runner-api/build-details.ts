// GitLab 8.17's Entities::Build and Entities::BuildDetails, typed as the Go runner decodes them
// (ints are ints, bools are bools: its JSON decoding is strict).
import type { AppContext } from '../context.ts';
import type { Build, Variable } from '../store/builds.ts';
import type { Project } from '../store/projects.ts';
import { isoTime } from '../store/row-values.ts';
import { allOf, andThen, type MaybePromise } from '../domain/maybe-promise.ts';

export const GITLAB_VERSION = '8.17.0';
export const GITLAB_REVISION = 'jobscope';

function refSlug(ref: string): string {
  return ref.toLowerCase().replace(/[^a-z0-9]/g, '-').replace(/^-+|-+$/g, '').slice(0, 63);
}

function predefinedVariables(build: Build, project: Project | undefined): Variable[] {
  const v = (key: string, value: string, pub = true): Variable => ({ key, value, public: pub });
  const out = [
    v('CI', 'true'),
    v('GITLAB_CI', 'true'),
    v('CI_SERVER_NAME', 'GitLab'),
    v('CI_SERVER_VERSION', GITLAB_VERSION),
    v('CI_SERVER_REVISION', GITLAB_REVISION),
    v('CI_BUILD_ID', String(build.id)),
    v('CI_BUILD_TOKEN', build.token, false),
    v('CI_BUILD_REF', build.sha),
    v('CI_BUILD_BEFORE_SHA', build.before_sha),
    v('CI_BUILD_REF_NAME', build.ref),
    v('CI_BUILD_REF_SLUG', refSlug(build.ref)),
    v('CI_BUILD_NAME', build.name),
    v('CI_BUILD_STAGE', build.stage),
    v('CI_PROJECT_ID', String(build.project_id)),
  ];
  if (project) out.push(v('CI_PROJECT_NAME', project.name));
  if (build.tag) out.push(v('CI_BUILD_TAG', build.ref));
  return out;
}

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
    ...(build.artifacts_key ? { artifacts_file: { filename: build.artifacts_filename ?? 'artifacts.zip', size: build.artifacts_size ?? 0 } } : {}),
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
    ...buildEntity(build, project),
    commands: build.commands,
    repo_url: repoUrlOf(build, project, host),
    before_sha: build.before_sha,
    // The runner decodes a bool strictly: anything else stored in options is the default.
    allow_git_fetch: typeof build.options.allow_git_fetch === 'boolean' ? build.options.allow_git_fetch : true,
    ...(build.artifacts_key ? { artifacts_expire_at: isoTime(build.artifacts_expire_at) } : {}),
    options: build.options,
    timeout: build.timeout ?? project?.build_timeout ?? 3600,
    variables: [...predefinedVariables(build, project), ...build.variables],
    depends_on_builds: deps,
    credentials: [] as { type: string; url: string; username: string; password: string }[],
  };
}
