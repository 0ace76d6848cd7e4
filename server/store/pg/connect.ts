// The connection pool to PostgreSQL. `pg` is imported on the first connect, not at module load: a
// server on SQLite (the default, and the desktop app) never loads the driver, so its idle memory
// does not change.
import os from 'node:os';
import type { Pool, PoolClient } from 'pg';
import { explainConnectError } from './start-errors.ts';
import { checkUrl } from '../database-url.ts';

/** A pool or one of its clients: what a query function needs. */
export type Queryable = Pick<Pool, 'query'> | PoolClient;

export interface PgConnectOptions {
  /** Shown in pg_stat_activity and the server's log; default jobscope/<host>/<pid>, so each instance is told apart. */
  applicationName?: string;
  /** Connections this instance keeps at most (default 10). */
  max?: number;
  /**
   * How long a connect may take before it fails with an error that says so (default 10 s); also
   * how long a request waits for a connection of the pool when all are busy (pg-pool's rule).
   */
  connectTimeoutMs?: number;
  /**
   * The server cancels a statement running longer (PostgreSQL's statement_timeout, set for each of
   * the pool's sessions); default none. A request then answers 503 instead of waiting on a database
   * that does not answer (storage-errors.ts, 57014).
   */
  statementTimeoutMs?: number;
  /** An idle connection that failed (the server restarted, a proxy cut it); the pool replaces it on the next query. */
  onIdleError?: (err: Error) => void;
}

const INT8_OID = 20;

/**
 * The client's own bound on a statement, past the server's statement_timeout: a server that does not
 * answer at all (stopped with SIGSTOP, a network path that drops packets) never sends the
 * cancellation, and the request would wait for TCP to give up. pg-pool destroys a client whose
 * query failed, so the session left mid-statement is not handed to the next request.
 */
const QUERY_TIMEOUT_GRACE_MS = 2_000;

/**
 * bigint columns (ids, epoch ms, counts) as JS numbers, as the SQLite store returns them: each one
 * the server writes stays far below 2^53. One written by hand past it reads rounded (and clamped by
 * row-values.ts where it is read), not as a throw that would fail every read of its row.
 */
const parseInt8 = (text: string): number => Number(text);

export async function connectPg(url: string, opts: PgConnectOptions = {}): Promise<Pool> {
  checkUrl(url);
  const { default: pg } = await import('pg');
  const builtin = pg.types.getTypeParser.bind(pg.types) as (oid: number, format?: string) => unknown;
  const pool = new pg.Pool({
    connectionString: url,
    application_name: opts.applicationName ?? `jobscope/${os.hostname()}/${process.pid}`,
    max: opts.max ?? 10,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs, query_timeout: opts.statementTimeoutMs + QUERY_TIMEOUT_GRACE_MS } : {}),
    // Per pool, not pg.types.setTypeParser: the process-wide table is shared with any other pg user.
    types: { getTypeParser: ((oid: number, format?: string) => (oid === INT8_OID ? parseInt8 : builtin(oid, format))) as never },
  });
  // Without a listener an idle client's error is an 'error' event nobody handles: the process would exit.
  pool.on('error', (err) => opts.onIdleError?.(err));
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw explainConnectError(err, url);
  }
  return pool;
}
