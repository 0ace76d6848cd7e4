// Builds on PostgreSQL: BuildsPort of store/ports/ports.ts, asynchronous, with the semantics and values of
// store/sqlite/builds.ts (token stored with its SHA-256 digest and looked up by it; lists, variables,
// options and tag lists round-trip as JSON; list filters, order and limit bounds as there). Dispatch
// is take.ts (FOR UPDATE SKIP LOCKED across instances).
//
// No credentials cache. The SQLite adapter caches credentials() because it is the only writer of
// builds and drops an entry on each status change; here another instance may finish or cancel a
// build at any moment, and a cached status would let a trace be appended to a canceled build. So
// credentials() reads the row on every call (one lookup by primary key joined to its project). Trace
// parts are checked against credentials kept per build (trace-credentials.ts), whose status the
// append's row lock reads again.
import { digest, newToken } from '../../auth/tokens.ts';
import type { Build, BuildCredentials, BuildFilter, NewBuild } from '../ports/build.ts';
import { listLimit } from '../ports/build.ts';
import type { Runner } from '../ports/runner.ts';
import { BUILD_COLUMNS, toBuild, type PgBuildRow } from './build-rows.ts';
import type { Queryable } from './connect.ts';
import type { BuildsPortAsync } from '../ports/async-ports.ts';
import { takeBuild } from './take.ts';

const B_COLUMNS = BUILD_COLUMNS.split(',')
  .map((c) => `b.${c.trim()}`)
  .join(', ');

/** What creating a build of a project that does not exist throws (as the SQLite adapter's foreign-key failure). */
export class BuildProjectMissingError extends Error {
  constructor(projectId: number) {
    super(`FOREIGN KEY constraint failed: project ${projectId} does not exist`);
    this.name = 'BuildProjectMissingError';
  }
}

// A bigint parameter that is not an integer makes pg throw; SQLite simply finds no row with that id.
const BY_TOKEN = `SELECT ${BUILD_COLUMNS} FROM builds WHERE token_sha = $1`;
const CREDENTIALS = `SELECT b.id, b.project_id, b.status, b.token_sha, p.runners_token_sha, p.ci_token_sha
  FROM builds b JOIN projects p ON p.id = b.project_id WHERE b.id = $1`;

const isKey = (id: number): boolean => Number.isSafeInteger(id);

export class PgBuilds implements BuildsPortAsync {
  constructor(private readonly db: Queryable) {}

  async create(input: NewBuild): Promise<Build> {
    const token = newToken();
    // Inserted from a SELECT that yields nothing for a missing project: a refused INSERT would have
    // drawn an id, and ids would run ahead of SQLite's, which draws none for a failed insert.
    const { rows } = await this.db.query<PgBuildRow>(
      `INSERT INTO builds (project_id, status, name, stage, ref, sha, before_sha, tag, commands, repo_url, variables, options, timeout,
                           tag_list, depends_on, token, token_sha, created_at)
       SELECT $1::bigint, 'pending', $2, $3, $4, $5, $6, $7, $8, $9, $10::json, $11::json, $12, $13::jsonb, $14::jsonb, $15, $16, $17
       WHERE EXISTS (SELECT 1 FROM projects WHERE id = $1::bigint)
       RETURNING ${BUILD_COLUMNS}`,
      [
        isKey(input.project_id) ? input.project_id : null, input.name, input.stage, input.ref, input.sha, input.before_sha, input.tag,
        input.commands, input.repo_url, JSON.stringify(input.variables), JSON.stringify(input.options), input.timeout,
        JSON.stringify(input.tag_list), JSON.stringify(input.depends_on), token, digest(token), Date.now(),
      ],
    );
    if (!rows.length) throw new BuildProjectMissingError(input.project_id);
    return toBuild(rows[0]);
  }

  /**
   * `count` builds of one input in one multi-row INSERT (ids in order, each its own token): a
   * request for 10,000 builds was 10,000 round trips, over 60 s. All or none of them, as create()'s
   * missing project: none is inserted and the same error is thrown.
   */
  async createMany(input: NewBuild, count: number): Promise<Build[]> {
    if (count < 1) return [];
    const tokens = Array.from({ length: count }, () => newToken());
    const { rows } = await this.db.query<PgBuildRow>(
      `INSERT INTO builds (project_id, status, name, stage, ref, sha, before_sha, tag, commands, repo_url, variables, options, timeout,
                           tag_list, depends_on, token, token_sha, created_at)
       SELECT $1::bigint, 'pending', $2, $3, $4, $5, $6, $7, $8, $9, $10::json, $11::json, $12, $13::jsonb, $14::jsonb, t.token, t.sha, $17
       FROM unnest($15::text[], $16::text[]) WITH ORDINALITY AS t(token, sha, n)
       WHERE EXISTS (SELECT 1 FROM projects WHERE id = $1::bigint)
       ORDER BY t.n
       RETURNING ${BUILD_COLUMNS}`,
      [
        isKey(input.project_id) ? input.project_id : null, input.name, input.stage, input.ref, input.sha, input.before_sha, input.tag,
        input.commands, input.repo_url, JSON.stringify(input.variables), JSON.stringify(input.options), input.timeout,
        JSON.stringify(input.tag_list), JSON.stringify(input.depends_on), tokens, tokens.map((t) => digest(t)), Date.now(),
      ],
    );
    if (!rows.length) throw new BuildProjectMissingError(input.project_id);
    // RETURNING's order is not promised; the ids were drawn in t.n order.
    return rows.map(toBuild).sort((a, b) => a.id - b.id);
  }

  async byId(id: number): Promise<Build | undefined> {
    if (!isKey(id)) return undefined;
    const { rows } = await this.db.query<PgBuildRow>(`SELECT ${BUILD_COLUMNS} FROM builds WHERE id = $1`, [id]);
    return rows[0] && toBuild(rows[0]);
  }

  /** In the order asked, repeats kept and missing ids left out, as the SQLite adapter's byId per id; one query. */
  async byIds(ids: number[]): Promise<Build[]> {
    const keys = [...new Set(ids.filter(isKey))];
    if (!keys.length) return [];
    const { rows } = await this.db.query<PgBuildRow>(`SELECT ${BUILD_COLUMNS} FROM builds WHERE id = ANY($1::bigint[])`, [keys]);
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    return ids.flatMap((id) => {
      const r = byId.get(id);
      return r ? [toBuild(r)] : [];
    });
  }

  async byToken(token: string): Promise<Build | undefined> {
    const { rows } = await this.db.query<PgBuildRow>({ name: 'jobscope-build-by-token', text: BY_TOKEN, values: [digest(token)] });
    return rows[0] && toBuild(rows[0]);
  }

  /** Read from the database on every call: another instance may have changed the status (see the header). */
  async credentials(id: number): Promise<BuildCredentials | undefined> {
    if (!isKey(id)) return undefined;
    // Named, so each connection parses and plans the join once: it runs on every trace part and artifact request.
    const { rows } = await this.db.query<BuildCredentials>({ name: 'jobscope-build-credentials', text: CREDENTIALS, values: [id] });
    return rows[0];
  }

  take(runner: Runner): Promise<Build | undefined> {
    return takeBuild(this.db, runner);
  }

  async finish(id: number, status: 'success' | 'failed'): Promise<boolean> {
    if (!isKey(id)) return false;
    const { rowCount } = await this.db.query(`UPDATE builds SET status = $1, finished_at = $2 WHERE id = $3 AND status = 'running'`, [status, Date.now(), id]);
    return rowCount === 1;
  }

  async cancel(id: number): Promise<boolean> {
    if (!isKey(id)) return false;
    const { rowCount } = await this.db.query(
      `UPDATE builds SET status = 'canceled', finished_at = $1 WHERE id = $2 AND status IN ('pending', 'running')`,
      [Date.now(), id],
    );
    return rowCount === 1;
  }

  /**
   * Running builds whose started_at + timeout is before `now` (project timeout when the build has
   * none). The timeout is widened to bigint before the multiplication: an integer column times 1000
   * overflows PostgreSQL's int4 (an error) for timeouts over ~24 days, where SQLite's integers are 64-bit.
   */
  async stuck(now: number): Promise<Build[]> {
    const { rows } = await this.db.query<PgBuildRow>(
      `SELECT ${B_COLUMNS} FROM builds b JOIN projects p ON p.id = b.project_id
       WHERE b.status = 'running' AND b.started_at + COALESCE(b.timeout, p.build_timeout)::bigint * 1000 < $1
       ORDER BY b.id`,
      [now],
    );
    return rows.map(toBuild);
  }

  async setArtifacts(id: number, a: { key: string; filename: string; size: number; expire_at: number | null }): Promise<void> {
    if (!isKey(id)) return;
    await this.db.query('UPDATE builds SET artifacts_key = $1, artifacts_filename = $2, artifacts_size = $3, artifacts_expire_at = $4 WHERE id = $5', [
      a.key, a.filename, a.size, a.expire_at, id,
    ]);
  }

  async clearArtifacts(id: number): Promise<void> {
    if (!isKey(id)) return;
    await this.db.query(
      'UPDATE builds SET artifacts_key = NULL, artifacts_filename = NULL, artifacts_size = NULL, artifacts_expire_at = NULL WHERE id = $1',
      [id],
    );
  }

  /** In id order: the SQLite adapter has no index to read them by and so answers in rowid order. */
  async expiredArtifacts(now: number): Promise<Build[]> {
    const { rows } = await this.db.query<PgBuildRow>(
      `SELECT ${BUILD_COLUMNS} FROM builds WHERE artifacts_key IS NOT NULL AND artifacts_expire_at IS NOT NULL AND artifacts_expire_at <= $1 ORDER BY id`,
      [now],
    );
    return rows.map(toBuild);
  }

  async artifactKeys(): Promise<Set<string>> {
    const { rows } = await this.db.query<{ k: string }>('SELECT artifacts_key AS k FROM builds WHERE artifacts_key IS NOT NULL');
    return new Set(rows.map((r) => r.k));
  }

  async list(f: BuildFilter = {}): Promise<Build[]> {
    const where: string[] = [];
    const params: (string | number)[] = [];
    const filter = (sql: string, value: string | number) => {
      params.push(value);
      where.push(`${sql} $${params.length}`);
    };
    if (f.status) filter('status =', f.status);
    if (f.project_id !== undefined) filter('project_id =', f.project_id);
    if (f.runner_id !== undefined) filter('runner_id =', f.runner_id);
    if (f.before_id !== undefined) filter('id <', f.before_id);
    params.push(listLimit(f));
    const sql = `SELECT ${BUILD_COLUMNS} FROM builds ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY id DESC LIMIT $${params.length}`;
    const { rows } = await this.db.query<PgBuildRow>(sql, params);
    return rows.map(toBuild);
  }

  async countByStatus(): Promise<Record<string, number>> {
    const { rows } = await this.db.query<{ status: string; n: number }>('SELECT status, count(*) AS n FROM builds GROUP BY status ORDER BY status');
    const out: Record<string, number> = {};
    for (const r of rows) out[r.status] = r.n;
    return out;
  }
}
