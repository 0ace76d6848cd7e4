// A builds row read from PostgreSQL as the Build the domain knows (store/sqlite/builds.ts). pg has already
// parsed json/jsonb and booleans, and bigint is read as a number (connect.ts); the checks here are
// the second line row-values.ts is for SQLite: a row edited by hand reads clamped or empty, not as a throw.
import { isString, isVariable } from '../rows/row-values.ts';
import type { Build, BuildStatus } from '../ports/build.ts';
import type { Project } from '../ports/project.ts';
import { isId, isPlainObject, storedInt, storedTimeOr0 } from '../rows/row-values.ts';
import { storedTime } from '../../util/times.ts';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../util/json-depth.ts';

/** As pg returns a builds row: the Build's columns, with the JSON ones not yet checked. */
export type PgBuildRow = Omit<Build, 'status' | 'variables' | 'options' | 'tag_list' | 'depends_on'> & {
  status: string;
  variables: unknown;
  options: unknown;
  tag_list: unknown;
  depends_on: unknown;
};

/** The columns a Build is read from (never token_sha: a digest is no part of the record). */
export const BUILD_COLUMNS = `id, project_id, runner_id, status, name, stage, ref, sha, before_sha, tag, commands, repo_url,
  variables, options, timeout, tag_list, depends_on, token, artifacts_key, artifacts_filename, artifacts_size,
  artifacts_expire_at, created_at, started_at, finished_at`;

const listOf = <T>(v: unknown, keep: (x: unknown) => x is T): T[] => (Array.isArray(v) ? v.filter(keep) : []);

/**
 * Options nested past the request bound read as {}, as the SQLite adapter reads them (store/sqlite/builds.ts
 * optionsOf): a row written by an older version or by hand would overflow whoever answers it. pg
 * has parsed the column already, so the walk is over the value (iterative: any depth is safe).
 */
const optionsOf = (v: unknown): Record<string, unknown> => (isPlainObject(v) && !nestedDeeperThan(v, MAX_JSON_DEPTH) ? v : {});

export function toBuild(r: PgBuildRow): Build {
  return {
    id: storedInt(r.id) ?? 0,
    project_id: storedInt(r.project_id) ?? 0,
    runner_id: storedInt(r.runner_id),
    status: r.status as BuildStatus,
    name: r.name,
    stage: r.stage,
    ref: r.ref,
    sha: r.sha,
    before_sha: r.before_sha,
    tag: r.tag === true,
    commands: r.commands,
    repo_url: r.repo_url,
    variables: listOf(r.variables, isVariable),
    options: optionsOf(r.options),
    timeout: storedInt(r.timeout, 1, 2 ** 31 - 1),
    tag_list: listOf(r.tag_list, isString),
    depends_on: listOf(r.depends_on, isId),
    token: r.token,
    artifacts_key: r.artifacts_key,
    artifacts_filename: r.artifacts_filename,
    artifacts_size: storedInt(r.artifacts_size, 0),
    artifacts_expire_at: storedTime(r.artifacts_expire_at),
    created_at: storedTimeOr0(r.created_at),
    started_at: storedTime(r.started_at),
    finished_at: storedTime(r.finished_at),
  };
}

/** The build's project as the poll's hand-out returns it beside the build (take.ts), its columns prefixed. */
export const PROJECT_RETURNED =
  'p.id AS p_id, p.name AS p_name, p.runners_token AS p_runners_token, p.ci_token AS p_ci_token, ' +
  'p.shared_runners_enabled AS p_shared_runners_enabled, p.build_timeout AS p_build_timeout, p.created_at AS p_created_at';

export interface PgJoinedProjectRow {
  p_id: number;
  p_name: string;
  p_runners_token: string;
  p_ci_token: string;
  p_shared_runners_enabled: boolean;
  p_build_timeout: number;
  p_created_at: number;
}

/** As pg/projects.ts reads a projects row (clamped the same way; its mapper is not exported from a file this one does not own). */
export function toJoinedProject(r: PgJoinedProjectRow): Project {
  return {
    id: storedInt(r.p_id) ?? 0,
    name: r.p_name,
    runners_token: r.p_runners_token,
    ci_token: r.p_ci_token,
    shared_runners_enabled: r.p_shared_runners_enabled === true,
    build_timeout: storedInt(r.p_build_timeout, 1, 2 ** 31 - 1) ?? 3600,
    created_at: storedTimeOr0(r.p_created_at),
  };
}
