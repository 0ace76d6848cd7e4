// Applies the PostgreSQL schema (migrations.ts) at start. Instances starting together take turns on
// one advisory lock, held by a session for the whole check-and-apply: the first applies what is
// missing, each later one finds it applied and applies nothing. Each version commits in its own
// transaction with its schema_migrations row (PostgreSQL's DDL is transactional), so a version that
// fails leaves nothing of itself behind and the versions before it stay applied.
import type { Pool, PoolClient } from 'pg';
import { PG_MIGRATIONS } from './migrations.ts';
import { PgStoreError } from '../database-url.ts';
import { withClient } from './transaction.ts';

/** The advisory lock key of schema changes: "jobscope" in ASCII as a bigint (a string: past 2^53). */
export const MIGRATION_LOCK_KEY = '7669456938164252773';

export interface MigrateResult {
  /** The schema version the database is at now. */
  version: number;
  /** The versions this call applied (empty when another instance had applied them). */
  applied: number[];
}

export async function migrate(pool: Pool, migrations: readonly string[] = PG_MIGRATIONS): Promise<MigrateResult> {
  // On a held client (withClient): a session cut while migrating (a failover, pg_terminate_backend)
  // rejects the pending query with a PgStoreError instead of an unhandled 'error' ending the process.
  return withClient(pool, async (client, drop) => {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    try {
      return await applyMissing(client, migrations);
    } finally {
      // An unusable session is dropped, which ends it, and its lock with it.
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]).catch(drop);
    }
  });
}

async function applyMissing(client: PoolClient, migrations: readonly string[]): Promise<MigrateResult> {
  await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    applied_at bigint NOT NULL,
    applied_by text NOT NULL DEFAULT current_setting('application_name')
  )`);
  const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  const done = new Set(rows.map((r) => r.version));
  const newest = rows.length ? rows[rows.length - 1].version : 0;
  if (newest > migrations.length) {
    throw new PgStoreError(
      `The database's schema is at version ${newest}, newer than this server knows (${migrations.length}): a newer Jobscope has used it. ` +
        'Upgrade this instance to that version (every instance on one database must run the same version), or point it at another database.',
      'schema-newer',
    );
  }
  const applied: number[] = [];
  for (const [i, sql] of migrations.entries()) {
    const version = i + 1;
    if (done.has(version)) continue;
    await client.query('BEGIN');
    try {
      await client.query(sql);
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version, Date.now()]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      const e = err as { code?: string; message?: string };
      const what =
        e.code === '42501'
          ? 'the user may not create tables here: grant it CREATE on the schema, or make it the database\'s owner'
          : e.code === '42P07'
            ? 'a table of that name already exists: give Jobscope a database of its own'
            : 'fix what PostgreSQL reports, then start again';
      throw new PgStoreError(`Schema version ${version} could not be applied (${e.message ?? String(err)}; ${e.code ?? 'no code'}); nothing of it was kept: ${what}.`, e.code ?? 'migration-failed', {
        cause: err,
      });
    }
    applied.push(version);
  }
  return { version: Math.max(newest, migrations.length), applied };
}
