// A client of the pool held for a run of statements: the one way this store runs statements that
// must share a session (a transaction: the job backend's steps, a trace append under its row lock,
// changes with their NOTIFY; the migrations under their advisory lock).
import type { Pool, PoolClient, QueryResult } from 'pg';

/**
 * Runs `fn` on one checked-out client and releases it. `drop` marks the session unusable (its
 * commit or unlock may or may not have landed): the client is then destroyed, not pooled.
 */
export async function withClient<T>(pool: Pool, fn: (client: PoolClient, drop: (err: Error) => void) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A checked-out client has no 'error' listener (the pool's is for idle ones): a connection cut
  // while it is held would emit an unhandled 'error' and end the process. The query in flight
  // rejects on its own; this keeps the event handled and the client out of the pool.
  const drop = (err: Error) => {
    broken = err;
  };
  client.on('error', drop);
  try {
    return await fn(client, drop);
  } finally {
    client.removeListener('error', drop);
    client.release(broken);
  }
}

/** What a transaction's body leaves: its result, and a statement to run in the COMMIT's round trip. */
export interface Committed<T> {
  out: T;
  then?: string;
}

/**
 * Runs `begin` (BEGIN, and in the same text whatever must run first, whose results `fn` is given),
 * then `fn`, then COMMIT, with `fn`'s `then` before it in the same text; rolls back and rethrows when
 * any of it fails. Each text is one round trip: PostgreSQL runs the statements of a simple query in
 * order (parameters are for single statements only), and skips a COMMIT behind a failed one.
 */
export function inTransactionSteps<T>(pool: Pool, begin: string, fn: (client: PoolClient, begun: QueryResult[]) => Promise<Committed<T>>): Promise<T> {
  return withClient(pool, async (client, drop) => {
    try {
      const r = (await client.query(begin)) as QueryResult | QueryResult[];
      const step = await fn(client, Array.isArray(r) ? r : [r]);
      await client.query(step.then === undefined ? 'COMMIT' : `${step.then}; COMMIT`);
      return step.out;
    } catch (err) {
      await client.query('ROLLBACK').catch(drop);
      throw err;
    }
  });
}

/** Runs `fn` between `begin` and COMMIT on one client; rolls back and rethrows when it fails. */
export function inTransaction<T>(pool: Pool, begin: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return inTransactionSteps(pool, begin, async (client) => ({ out: await fn(client) }));
}
