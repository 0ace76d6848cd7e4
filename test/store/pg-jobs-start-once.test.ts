// The listing of archives stored without one, which every instance asks for at its start
// (scheduleBuiltins): two instances starting together on one PostgreSQL database push one
// archive_listing job per archive between them, not one each (PgJobBackend.pushUnlessPending:
// keyed by the args, and a job waiting, running or retrying counts). A trigger the test adds logs
// every push of a listing job, so the count is the database's.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import { openPgDatabase, type PgDatabase } from '../../server/store/pg/index.ts';
import { PgJobBackend } from '../../server/store/pg/job-backend.ts';
import type { NewJob } from '../../server/jobs/backend.ts';

const PUSHES = `
  CREATE TABLE listing_pushes (seq bigserial PRIMARY KEY, build_id bigint, key text);
  CREATE FUNCTION listing_pushes_log() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO listing_pushes (build_id, key) VALUES ((NEW.args->>'build_id')::bigint, NEW.args->>'key');
    RETURN NEW;
  END $$;
  CREATE TRIGGER listing_pushes AFTER INSERT ON jobs FOR EACH ROW WHEN (NEW.kind = 'archive_listing') EXECUTE FUNCTION listing_pushes_log();`;

// No periodic built-ins: only the start's listing jobs are pushed.
const QUIET = { stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0, jobPollMs: 20 };

describe.skipIf(postgresMissing() !== null)('start work once across instances on PostgreSQL', () => {
  const cluster = usePostgres();
  let sql: pg.Client;
  let url: string;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    url = await cluster.createDatabase('start_once');
    const first = await startServer(QUIET, { database: url });
    const project = await createProject(first, 'archives');
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createBuild(first, project.id)).id as number);
    await first.close();
    sql = new pg.Client({ connectionString: url });
    await sql.connect();
    // Archives whose listing job was lost: a key and no listing row.
    await sql.query(`UPDATE builds SET artifacts_key = 'lost-' || id, artifacts_filename = 'artifacts.zip', artifacts_size = 1 WHERE id = ANY($1::bigint[])`, [ids]);
    await sql.query(PUSHES);
  }, 60_000);
  afterAll(async () => {
    await sql?.end();
    for (const s of servers) await s.close();
  });

  it('two instances starting together push one listing job per unlisted archive', async () => {
    servers.push(...(await Promise.all([startServer(QUIET, { database: url }), startServer(QUIET, { database: url })])));
    // Their stops wait for the start's scan (it is tracked work), so every push is in by now.
    for (const s of servers.splice(0)) await s.close();
    const { rows } = await sql.query<{ build_id: string; n: number }>('SELECT build_id, count(*)::int AS n FROM listing_pushes GROUP BY 1 ORDER BY 1');
    expect(rows.map((r) => r.n)).toEqual([1, 1, 1]);
  }, 60_000);

  it('a third instance starting later pushes none while those jobs wait, run or retry', async () => {
    servers.push(await startServer(QUIET, { database: url }));
    for (const s of servers.splice(0)) await s.close();
    const { rows } = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM listing_pushes');
    expect(rows[0]!.n).toBe(3);
  }, 60_000);
});

describe.skipIf(postgresMissing() !== null)('PgJobBackend.pushUnlessPending', () => {
  const cluster = usePostgres();
  let db: PgDatabase;
  let other: PgDatabase;
  beforeAll(async () => {
    const url = await cluster.createDatabase('pending');
    db = await openPgDatabase(url, { max: 4 });
    other = await openPgDatabase(url, { max: 4 });
  });
  afterAll(async () => {
    await db?.close();
    await other?.close();
  });
  const job = (args: Record<string, unknown>): NewJob => ({ queue: 'lists', class: 'ListWorker', kind: 'listing', args, retry: 3, retry_count: 0, created_at: 1, enqueued_at: 1 });

  it('pushes once per args across backends; a waiting, running or retrying job holds it back, a dead one does not', async () => {
    const a = new PgJobBackend({ pool: db.pool, now: () => Date.now() });
    const b = new PgJobBackend({ pool: other.pool, now: () => Date.now() });
    // Twenty pushes of the same args from two pools at once, keys in either order: one row.
    const racing = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).pushUnlessPending(job(i % 4 < 2 ? { id: 1, key: 'k' } : { key: 'k', id: 1 }))));
    expect(racing.filter((j) => j !== null)).toHaveLength(1);
    expect(await b.pushUnlessPending(job({ id: 2, key: 'k' }))).not.toBeNull();
    // Running (claimed by a): still pending.
    const [taken] = await a.fetch(['lists'], 1);
    expect(taken!.args).toEqual({ id: 1, key: 'k' });
    expect(await b.pushUnlessPending(job({ id: 1, key: 'k' }))).toBeNull();
    // Failed with retries left: pending until it ends.
    await a.retryLater({ ...taken!, retry_count: 1, run_at: Date.now() + 60_000, failed_at: Date.now(), error: 'E: no' }, { processed: 1, failed: 1 });
    expect(await b.pushUnlessPending(job({ id: 1, key: 'k' }))).toBeNull();
    // Dead: it gave up, a new push may try again. (Its retry runs first: an end is only written for
    // a job its process holds, so it is taken again, as the job system would when the retry is due.)
    await a.requeue([taken!.id], Date.now());
    const again = (await a.fetch(['lists'], 2)).find((j) => j.id === taken!.id);
    expect(again).toBeDefined();
    await a.kill({ ...again!, run_at: null, failed_at: Date.now(), error: 'E: no' }, { processed: 0, failed: 0 }, 100);
    expect(await b.pushUnlessPending(job({ id: 1, key: 'k' }))).not.toBeNull();
    const { rows } = await db.pool.query<{ state: string; n: number }>(`SELECT state, count(*)::int AS n FROM jobs GROUP BY 1 ORDER BY 1`);
    expect(rows).toEqual([
      { state: 'dead', n: 1 },
      { state: 'queued', n: 2 },
    ]);
  });
});
