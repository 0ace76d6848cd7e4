// The PostgreSQL store's start (server/store/pg/): the schema from an empty database holds every
// table and column of the SQLite store; instances starting at the same moment apply it once, under
// the advisory lock; a schema newer than the server, an unreachable server, a wrong password or an
// unknown database each fail with a message that says what to do next. A real throwaway cluster
// (test/helpers/postgres.ts), host connections with a password.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PoolClient } from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { freePort } from '../helpers/redis.ts';
import { Db } from '../../server/store/sqlite/db.ts';
import { openPgDatabase, PgStoreError, type PgDatabase } from '../../server/store/pg/index.ts';
import { connectPg } from '../../server/store/pg/connect.ts';
import { MIGRATION_LOCK_KEY, migrate } from '../../server/store/pg/migrate.ts';
import { PG_MIGRATIONS } from '../../server/store/pg/migrations.ts';

const missing = postgresMissing();
const PASSWORD = 'p@ss word/1';
const pg = usePostgres({ password: PASSWORD });
let dbCount = 0;
const freshDb = () => pg.createDatabase(`m${++dbCount}`);

async function rejection(p: Promise<unknown>): Promise<PgStoreError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the call to fail').toBeInstanceOf(PgStoreError);
  return err as PgStoreError;
}

/** Table → sorted column names of the SQLite store, from a fresh file migrated by the server's own code. */
function sqliteColumns(): Map<string, string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pgcols-'));
  const db = new Db(path.join(dir, 'jobscope.db'), { fsync: false });
  try {
    const tables = db.all<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`);
    return new Map(tables.map((t) => [t.name, db.all<{ name: string }>(`SELECT name FROM pragma_table_info(?)`, [t.name]).map((c) => c.name).sort()]));
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(missing)(`PostgreSQL store: schema and start${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('from an empty database: every table and column of the SQLite store, version recorded, nothing applied twice', async () => {
    const url = await freshDb();
    const first = await openPgDatabase(url, { applicationName: 'jobscope-test-a' });
    try {
      expect(first.schemaVersion).toBe(PG_MIGRATIONS.length);
      expect(first.applied).toEqual(PG_MIGRATIONS.map((_, i) => i + 1));
      const { rows } = await first.pool.query<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`,
      );
      const pgCols = new Map<string, string[]>();
      for (const r of rows) pgCols.set(r.table_name, [...(pgCols.get(r.table_name) ?? []), r.column_name]);
      const expected = sqliteColumns();
      // Emptied by SQLite's migration 5 and never read since: the one column not carried over.
      expected.set('builds', expected.get('builds')!.filter((c) => c !== 'artifacts_listing'));
      expected.get('schema_migrations')!.push('applied_by');
      // PostgreSQL only (version 2): trace lengths several instances share; on SQLite the file is the length.
      expected.set('build_traces', ['build_id', 'generation', 'length']);
      // PostgreSQL only (version 3): the job system shared by instances (pg/job-backend.ts): claims and heartbeats.
      expected.get('jobs')!.push('claimed_by', 'claimed_at');
      expected.set('job_processes', ['beat_at', 'concurrency', 'expires_at', 'hostname', 'identity', 'labels', 'pid', 'queues', 'started_at', 'tag', 'work']);
      expect(Object.fromEntries([...pgCols].map(([t, c]) => [t, c.sort()]))).toEqual(Object.fromEntries([...expected].map(([t, c]) => [t, c.sort()])));
      const types = await first.pool.query<{ c: string; t: string }>(
        `SELECT table_name || '.' || column_name AS c, data_type AS t FROM information_schema.columns
         WHERE table_schema = 'public' AND column_name IN ('id', 'created_at', 'tag_list', 'options', 'is_shared')`,
      );
      expect(Object.fromEntries(types.rows.map((r) => [r.c, r.t]))).toMatchObject({
        'builds.id': 'bigint',
        'builds.created_at': 'bigint',
        'builds.tag_list': 'jsonb',
        'builds.options': 'json',
        'runners.is_shared': 'boolean',
      });
    } finally {
      await first.close();
    }
    const again = await openPgDatabase(url, { applicationName: 'jobscope-test-b' });
    try {
      expect(again.applied).toEqual([]);
      expect(again.schemaVersion).toBe(PG_MIGRATIONS.length);
      const v = await again.pool.query<{ version: number; applied_by: string }>('SELECT version, applied_by FROM schema_migrations ORDER BY version');
      expect(v.rows).toEqual(PG_MIGRATIONS.map((_, i) => ({ version: i + 1, applied_by: 'jobscope-test-a' })));
    } finally {
      await again.close();
    }
  });

  it('an archive listing follows its archive: a new artifacts key drops it (the SQLite trigger, in PL/pgSQL)', async () => {
    const db = await openPgDatabase(await freshDb());
    try {
      const q = (sql: string) => db.pool.query(sql);
      await q(`INSERT INTO projects (id, name, runners_token, runners_token_sha, ci_token, ci_token_sha, created_at) VALUES (1, 'p', 'r', 'rs', 'c', 'cs', 0)`);
      await q(`INSERT INTO builds (id, project_id, status, name, stage, ref, sha, before_sha, commands, token, token_sha, created_at, artifacts_key)
               VALUES (1, 1, 'success', 'n', 's', 'main', 'a', 'b', 'true', 't', 'ts', 0, 'k1')`);
      await q(`INSERT INTO artifact_listings VALUES (1, 'k1', 1, false, '[{"name":"a","size":1}]')`);
      await q(`UPDATE builds SET artifacts_filename = 'x.zip' WHERE id = 1`);
      expect((await q('SELECT count(*)::int AS n FROM artifact_listings')).rows[0].n).toBe(1);
      await q(`UPDATE builds SET artifacts_key = 'k2' WHERE id = 1`);
      expect((await q('SELECT count(*)::int AS n FROM artifact_listings')).rows[0].n).toBe(0);
    } finally {
      await db.close();
    }
  });

  it('two instances starting at the same moment both succeed, and the schema is applied once (they wait on the advisory lock)', async () => {
    const url = await freshDb();
    // A third session holds the lock until both instances are seen waiting for it: they really start together.
    const holder = await connectPg(url, { applicationName: 'holder', max: 1 });
    const watch = await connectPg(url, { applicationName: 'watch', max: 1 });
    let a: PgDatabase | undefined;
    let b: PgDatabase | undefined;
    let held: PoolClient | undefined;
    try {
      held = await holder.connect();
      await held.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
      let settled = false;
      const starting = Promise.allSettled([openPgDatabase(url, { applicationName: 'instance-a' }), openPgDatabase(url, { applicationName: 'instance-b' })]);
      void starting.then(() => (settled = true));
      for (;;) {
        expect(settled, 'both instances finished without waiting for the held migration lock').toBe(false);
        const { rows } = await watch.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND NOT l.granted AND a.application_name IN ('instance-a', 'instance-b')`,
        );
        if (rows[0].n === 2) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      // Nothing was created while the lock was held: the table of versions comes after the lock.
      expect((await watch.query(`SELECT to_regclass('public.schema_migrations') AS t`)).rows[0].t).toBeNull();
      await held.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]);
      held.release();
      held = undefined;
      const [ra, rb] = await starting;
      expect(ra.status, String((ra as PromiseRejectedResult).reason)).toBe('fulfilled');
      expect(rb.status, String((rb as PromiseRejectedResult).reason)).toBe('fulfilled');
      a = (ra as PromiseFulfilledResult<PgDatabase>).value;
      b = (rb as PromiseFulfilledResult<PgDatabase>).value;
      const all = PG_MIGRATIONS.map((_, i) => i + 1);
      expect([a.applied, b.applied].sort((x, y) => y.length - x.length)).toEqual([all, []]);
      expect(a.schemaVersion).toBe(PG_MIGRATIONS.length);
      expect(b.schemaVersion).toBe(PG_MIGRATIONS.length);
      const applier = a.applied.length ? 'instance-a' : 'instance-b';
      const v = await watch.query<{ version: number; applied_by: string }>('SELECT version, applied_by FROM schema_migrations ORDER BY version');
      expect(v.rows).toEqual(all.map((version) => ({ version, applied_by: applier })));
    } finally {
      await a?.close();
      await b?.close();
      held?.release(true);
      await holder.end();
      await watch.end();
    }
  });

  it('a version that fails leaves nothing of itself, keeps the ones before it, and says which', async () => {
    const url = await freshDb();
    const pool = await connectPg(url);
    try {
      const err = await rejection(migrate(pool, [...PG_MIGRATIONS, 'CREATE TABLE half_done (a int); SELECT 1 / 0']));
      expect(err.message).toMatch(new RegExp(`^Schema version ${PG_MIGRATIONS.length + 1} could not be applied \\(division by zero; 22012\\); nothing of it was kept`));
      expect((await pool.query(`SELECT to_regclass('public.half_done') AS t, to_regclass('public.builds') AS b`)).rows[0]).toEqual({ t: null, b: 'builds' });
      expect((await pool.query<{ v: number }>('SELECT max(version) AS v FROM schema_migrations')).rows[0].v).toBe(PG_MIGRATIONS.length);
    } finally {
      await pool.end();
    }
  });

  it('a session cut while migrating fails that start with a PgStoreError (no unhandled error), and the lock goes with it', async () => {
    const url = await freshDb();
    const pool = await connectPg(url, { applicationName: 'jobscope-cut' });
    const other = await connectPg(url);
    try {
      const running = migrate(pool, [...PG_MIGRATIONS, 'SELECT pg_sleep(60)']);
      const failed = running.then(
        () => undefined,
        (e: unknown) => e,
      );
      await expect
        .poll(async () => (await other.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(60)%' AND state = 'active'`)).rows[0].n, { timeout: 20_000 })
        .toBe(1);
      await other.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'jobscope-cut' AND pid <> pg_backend_pid()`);
      expect(await failed).toBeInstanceOf(PgStoreError);
      // The advisory lock ended with the session: the next start is not kept waiting.
      expect((await migrate(other)).version).toBe(PG_MIGRATIONS.length);
    } finally {
      await pool.end();
      await other.end();
    }
  });

  it('a database whose schema is newer than this server is refused, with what to do, and left as it was', async () => {
    const url = await freshDb();
    await (await openPgDatabase(url)).close();
    const newer = PG_MIGRATIONS.length + 1;
    pg.psql(`INSERT INTO schema_migrations (version, applied_at, applied_by) VALUES (${newer}, 0, 'jobscope-next')`, `m${dbCount}`);
    const err = await rejection(openPgDatabase(url));
    expect(err.code).toBe('schema-newer');
    expect(err.message).toBe(
      `The database's schema is at version ${newer}, newer than this server knows (${PG_MIGRATIONS.length}): a newer Jobscope has used it. ` +
        'Upgrade this instance to that version (every instance on one database must run the same version), or point it at another database.',
    );
    expect(pg.psql('SELECT count(*) FROM schema_migrations', `m${dbCount}`).trim()).toBe(String(newer));
  });

  it('unreachable, wrong password, unknown database, not a postgres URL: each says what to fix, never the password', async () => {
    const port = await freePort();
    const refused = await rejection(openPgDatabase(`postgres://jobscope:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/jobscope`));
    expect(refused.code).toBe('ECONNREFUSED');
    expect(refused.message).toBe(
      `PostgreSQL at postgres://jobscope:***@127.0.0.1:${port}/jobscope: connection refused (ECONNREFUSED). ` +
        `Is the server running and listening on 127.0.0.1:${port}? Start it, or fix the host and port in the URL.`,
    );

    const wrong = await rejection(openPgDatabase(pg.urlFor(pg.database, { password: 'not-it' })));
    expect(wrong.code).toBe('28P01');
    expect(wrong.message).toBe(
      `PostgreSQL at postgres://jobscope:***@127.0.0.1:${pg.port}/${pg.database}: password authentication failed for user "jobscope" (28P01). Fix the user or password in the URL.`,
    );

    const unknown = await rejection(openPgDatabase(pg.urlFor('no_such_db')));
    expect(unknown.code).toBe('3D000');
    expect(unknown.message).toBe(
      `PostgreSQL at postgres://jobscope:***@127.0.0.1:${pg.port}/no_such_db: database "no_such_db" does not exist (3D000). ` +
        'Create it (createdb -O jobscope no_such_db) or fix its name in the URL.',
    );

    const unencoded = await rejection(openPgDatabase(`postgres://jobscope:${PASSWORD}@127.0.0.1/jobscope`));
    expect(unencoded.code).toBe('bad-url');
    expect(unencoded.message).toMatch(/^The database URL is not a URL: .* percent-encoded \(%40 for @\)\.$/);
    const notPg = await rejection(openPgDatabase(`mysql://jobscope:${encodeURIComponent(PASSWORD)}@127.0.0.1/jobscope`));
    expect(notPg.code).toBe('bad-url');
    expect(notPg.message).toMatch(/is not a postgres:\/\/ URL: write it as postgres:\/\/user:password@host:5432\/database\.$/);
    const noDb = await rejection(openPgDatabase(`postgres://jobscope@127.0.0.1:${pg.port}`));
    expect(noDb.message).toMatch(/names no database: add it after the port/);

    for (const e of [refused, wrong, unknown, unencoded, notPg, noDb]) {
      expect(e.message).not.toContain(PASSWORD);
      expect(e.message).not.toContain(encodeURIComponent(PASSWORD));
    }
  });
});
