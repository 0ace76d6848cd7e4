// A builds row read from PostgreSQL as the Build the domain knows (store/builds.ts). pg has already
// parsed json/jsonb and booleans, and bigint is read as a number (connect.ts); the checks here are
// the second line row-values.ts is for SQLite: a row edited by hand reads clamped or empty, not as a throw.
import type { Build, BuildStatus, Variable } from '../builds.ts';
import { isId, isPlainObject, storedInt, storedTime, storedTimeOr0 } from '../row-values.ts';

export interface PgBuildRow {
  id: number;
  project_id: number;
  runner_id: number | null;
  status: string;
  name: string;
  stage: string;
  ref: string;
  sha: string;
  before_sha: string;
  tag: boolean;
  commands: string;
  repo_url: string | null;
  variables: unknown;
  options: unknown;
  timeout: number | null;
  tag_list: unknown;
  depends_on: unknown;
  token: string;
  artifacts_key: string | null;
  artifacts_filename: string | null;
  artifacts_size: number | null;
  artifacts_expire_at: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

/** The columns a Build is read from (never token_sha: a digest is no part of the record). */
export const BUILD_COLUMNS = `id, project_id, runner_id, status, name, stage, ref, sha, before_sha, tag, commands, repo_url,
  variables, options, timeout, tag_list, depends_on, token, artifacts_key, artifacts_filename, artifacts_size,
  artifacts_expire_at, created_at, started_at, finished_at`;

const isVariable = (v: unknown): v is Variable =>
  isPlainObject(v) && typeof v.key === 'string' && typeof v.value === 'string' && typeof v.public === 'boolean';
const listOf = <T>(v: unknown, keep: (x: unknown) => x is T): T[] => (Array.isArray(v) ? v.filter(keep) : []);
const isString = (t: unknown): t is string => typeof t === 'string';

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
    options: isPlainObject(r.options) ? r.options : {},
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
