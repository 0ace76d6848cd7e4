// Runners on PostgreSQL: RunnersPort of store/ports/ports.ts, asynchronous, with the semantics of
// store/sqlite/runners.ts: tokens stored with their SHA-256 digest and looked up by it, ids never given out
// twice (an identity column never reuses a value, deleted or not), an unchanged runner's contact
// written at most every CONTACT_WRITE_MS.
//
// No runner cache. The SQLite adapter keeps runners by token digest because it is the only writer
// of its table; here another instance may pause or delete a runner at any moment, and a cached
// copy would keep handing it builds. Nothing replaces the cache: byToken reads the row on every
// poll (one lookup by the unique token_sha index) and stillActive reads `active`. The contact
// throttle needs no cache either: it judges the row just read, whose contacted_at is the one in the
// database, whichever instance wrote it. (Were the lookup ever to cost too much, the replacement
// would be a cache of a second or so dropped by notify.ts events for runner changes, which do not
// exist yet.)
import { digest, newToken } from '../../auth/tokens.ts';
import { CONTACT_WRITE_MS, type NewRunner, type Runner, type RunnerInfo } from '../ports/runner.ts';
import { isPlainObject, storedInt, storedTimeOr0 } from '../rows/row-values.ts';
import { storedTime } from '../../util/times.ts';
import type { Queryable } from './connect.ts';
import type { RunnersPortAsync } from '../ports/async-ports.ts';

/** As pg returns a runners row: the Runner's columns, with the JSON ones not yet checked. */
type PgRunnerRow = Omit<Runner, 'tag_list' | 'info'> & { tag_list: unknown; info: unknown };

/** Never token_sha: a digest is no part of the record. */
const COLUMNS = 'id, token, description, is_shared, project_id, active, run_untagged, locked, tag_list, info, online, contacted_at, created_at';

// pg has parsed the json and jsonb columns; a row edited by hand reads with its bad parts emptied, as store/sqlite/runners.ts reads broken JSON.
const toRunner = (r: PgRunnerRow): Runner => ({
  id: storedInt(r.id) ?? 0,
  token: r.token,
  description: r.description,
  is_shared: r.is_shared === true,
  project_id: storedInt(r.project_id),
  active: r.active === true,
  run_untagged: r.run_untagged === true,
  locked: r.locked === true,
  tag_list: Array.isArray(r.tag_list) ? r.tag_list.filter((t): t is string => typeof t === 'string') : [],
  info: (isPlainObject(r.info) ? r.info : {}) as RunnerInfo,
  online: r.online === true,
  contacted_at: storedTime(r.contacted_at),
  created_at: storedTimeOr0(r.created_at),
});

/** What creating a runner of a project that does not exist throws (as the SQLite adapter's foreign-key failure). */
export class RunnerProjectMissingError extends Error {
  constructor(projectId: number) {
    super(`FOREIGN KEY constraint failed: project ${projectId} does not exist`);
    this.name = 'RunnerProjectMissingError';
  }
}

export class PgRunners implements RunnersPortAsync {
  constructor(private readonly db: Queryable) {}

  async create(input: NewRunner): Promise<Runner> {
    const token = newToken();
    const now = Date.now();
    // Inserted from a SELECT that yields nothing for a missing project, rather than letting the
    // foreign key refuse it: a refused INSERT has already drawn its id, and ids would then run ahead
    // of SQLite's, which draws none for a failed insert.
    const { rows } = await this.db.query<PgRunnerRow>(
      `INSERT INTO runners (token, token_sha, description, is_shared, project_id, active, run_untagged, locked, tag_list, info, online, contacted_at, created_at)
       SELECT $1, $2, $3, $4, $5::bigint, $6, $7, $8, $9::jsonb, $10::json, true, $11, $11
       WHERE $5::bigint IS NULL OR EXISTS (SELECT 1 FROM projects WHERE id = $5::bigint)
       RETURNING ${COLUMNS}`,
      [
        token, digest(token), input.description, input.is_shared, input.project_id, input.active !== false,
        input.run_untagged, input.locked, JSON.stringify(input.tag_list), JSON.stringify(input.info), now,
      ],
    );
    if (!rows.length) throw new RunnerProjectMissingError(input.project_id ?? 0);
    return toRunner(rows[0]);
  }

  async byId(id: number): Promise<Runner | undefined> {
    if (!Number.isSafeInteger(id)) return undefined;
    const { rows } = await this.db.query<PgRunnerRow>(`SELECT ${COLUMNS} FROM runners WHERE id = $1`, [id]);
    return rows[0] && toRunner(rows[0]);
  }

  /** The runner with this token, read from the database on every call (see the header: no cache). */
  async byToken(token: string): Promise<Runner | undefined> {
    // Named (prepared once per connection): every poll and update starts here.
    const { rows } = await this.db.query<PgRunnerRow>({ name: 'jobscope-runner-by-token', text: `SELECT ${COLUMNS} FROM runners WHERE token_sha = $1`, values: [digest(token)] });
    return rows[0] && toRunner(rows[0]);
  }

  /** Whether this runner still exists and is active: asked of the database, since any instance may have paused or deleted it. */
  async stillActive(runner: Runner): Promise<boolean> {
    const { rows } = await this.db.query<{ active: boolean }>('SELECT active FROM runners WHERE id = $1', [runner.id]);
    return rows[0]?.active === true;
  }

  /**
   * Records contact (and the runner's self-description, when sent), as store/sqlite/runners.ts: an
   * unchanged runner is written at most every CONTACT_WRITE_MS. `runner` is the row byToken has just
   * read, so the throttle judges the contact time some instance last committed.
   */
  async touch(runner: Runner, info?: RunnerInfo): Promise<void> {
    const write = contactWrite(runner, info);
    if (!write) return;
    if (write.info !== null) {
      await this.db.query('UPDATE runners SET contacted_at = $1, online = true, info = $2::json WHERE id = $3', [write.at, write.info, runner.id]);
    } else {
      await this.db.query('UPDATE runners SET contacted_at = $1, online = true WHERE id = $2', [write.at, runner.id]);
    }
    contactWritten(runner, write);
  }

  async setActive(id: number, active: boolean): Promise<boolean> {
    if (!Number.isSafeInteger(id)) return false;
    return (await this.db.query('UPDATE runners SET active = $1 WHERE id = $2', [active, id])).rowCount === 1;
  }

  /** Marks runners silent since `before` as offline; returns how many changed. */
  async markOffline(before: number): Promise<number> {
    const { rowCount } = await this.db.query('UPDATE runners SET online = false WHERE online AND (contacted_at IS NULL OR contacted_at < $1)', [before]);
    return rowCount ?? 0;
  }

  async delete(id: number): Promise<boolean> {
    if (!Number.isSafeInteger(id)) return false;
    return (await this.db.query('DELETE FROM runners WHERE id = $1', [id])).rowCount === 1;
  }

  async list(): Promise<Runner[]> {
    const { rows } = await this.db.query<PgRunnerRow>(`SELECT ${COLUMNS} FROM runners ORDER BY id`);
    return rows.map(toRunner);
  }

  /** Builds handed to each runner (any status), by runner id in id order; runners with none are absent. */
  async buildCounts(): Promise<Map<number, number>> {
    const { rows } = await this.db.query<{ runner_id: number; n: number }>(
      'SELECT runner_id, count(*) AS n FROM builds WHERE runner_id IS NOT NULL GROUP BY runner_id ORDER BY runner_id',
    );
    return new Map(rows.map((r) => [r.runner_id, r.n]));
  }

  /** Builds handed to one runner (any status). */
  async buildCount(id: number): Promise<number> {
    if (!Number.isSafeInteger(id)) return 0;
    const { rows } = await this.db.query<{ n: number }>('SELECT count(*) AS n FROM builds WHERE runner_id = $1', [id]);
    return rows[0]?.n ?? 0;
  }
}

/** A contact to write: when (epoch ms), and the merged info as JSON text when it changed (null: leave info). */
export interface ContactWrite {
  at: number;
  info: string | null;
}

/**
 * Whether this poll must write the runner's contact (touch's throttle, as store/sqlite/runners.ts), and
 * what; undefined when the row just read is recent enough. Split from the write so the poll can
 * make it inside its one statement (take.ts pollBuild).
 */
export function contactWrite(runner: Runner, info: RunnerInfo | undefined, now = Date.now()): ContactWrite | undefined {
  const merged = info && Object.keys(info).length > 0 ? { ...runner.info, ...info } : runner.info;
  const infoChanged = merged !== runner.info && JSON.stringify(merged) !== JSON.stringify(runner.info);
  if (!infoChanged && runner.online && runner.contacted_at !== null && now - runner.contacted_at < CONTACT_WRITE_MS) return undefined;
  return { at: now, info: infoChanged ? JSON.stringify(merged) : null };
}

/** The request's copy of the runner after its contact was written. */
export function contactWritten(runner: Runner, write: ContactWrite): void {
  if (write.info !== null) runner.info = JSON.parse(write.info) as RunnerInfo;
  runner.contacted_at = write.at;
  runner.online = true;
}
