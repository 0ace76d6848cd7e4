// A transaction on a client of the pool: the one way this store runs statements that must commit
// together (the job backend's steps, a trace append under its row lock, changes with their NOTIFY).
import type { Pool, PoolClient } from 'pg';

/** Runs `fn` between `begin` and COMMIT on one client; rolls back and rethrows when it fails. */
export async function inTransaction<T>(pool: Pool, begin: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A checked-out client has no 'error' listener (the pool's is for idle ones): a connection cut
  // mid-transaction would emit an unhandled 'error' and end the process. The query in flight
  // rejects on its own; this keeps the event handled and the client out of the pool.
  const onError = (err: Error) => {
    broken = err;
  };
  client.on('error', onError);
  try {
    await client.query(begin);
    try {
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: Error) => {
        // The session is unusable (its commit may or may not have landed): dropped, not pooled.
        broken = e;
      });
      throw err;
    }
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}
