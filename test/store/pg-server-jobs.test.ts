// The job system of two instances on one PostgreSQL database and no --redis: jobs are
// rows in the database's job tables (store/pg/jobs.ts), not in each data dir's SQLite, so a job
// enqueued on one instance runs once, on whichever instance fetched it, and a periodic job both
// instances schedule waits once, and a stuck build both sweep for is failed once.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { databaseOf } from '../../server/store/index.ts';
import type { JobKind } from '../../server/jobs/types.ts';
import { createBuild, createProject, registerRunner } from '../helpers/fixtures.ts';
import { runnerJson } from '../api/lib.ts';
import { waitFor } from '../helpers/wait.ts';

const cluster = usePostgres();

describe.skipIf(postgresMissing() !== null)('the job system of two instances on one PostgreSQL database', () => {
  let a: TestServer;
  let b: TestServer;
  let sql: pg.Client;
  /** Every run of the probe kind: its number and the instance that ran it. */
  const runs: { n: number; on: 'a' | 'b' }[] = [];

  const probe = (on: 'a' | 'b'): JobKind => ({
    class: 'H9Probe',
    // A built-in queue: both instances serve it from their start.
    queue: 'stuck_builds',
    retry: false,
    async perform(args) {
      // Long enough that one instance's slots cannot drain the queue before the other fetches.
      await new Promise((r) => setTimeout(r, 30));
      runs.push({ n: args.n as number, on });
    },
  });

  beforeAll(async () => {
    const url = await cluster.createDatabase('jobs_two');
    // Short fetch idle and few slots, so both instances take part; periodic stuck-builds runs often.
    const overrides = { jobPollMs: 20, jobConcurrency: 2, stuckBuildsEveryMs: 50 };
    a = await startServer(overrides, { database: url });
    b = await startServer(overrides, { database: url });
    a.server.ctx.jobs.register('h9_probe', probe('a'));
    b.server.ctx.jobs.register('h9_probe', probe('b'));
    sql = new pg.Client({ connectionString: url });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await b?.close();
    await a?.close();
  });

  it('run each job enqueued on one instance once, on either, with the rows in the database', async () => {
    const before = Number((await sql.query("SELECT coalesce(sum(value), 0) AS n FROM job_counters WHERE name = 'processed'")).rows[0].n);
    const jobs = [];
    for (let n = 0; n < 40; n++) jobs.push(...(await a.server.ctx.jobs.enqueue('h9_probe', { n })));
    expect(jobs).toHaveLength(40);
    await waitFor('40 probe runs', () => runs.length >= 40);
    // Jobs still finishing would show as extra runs: the queue is empty and nothing is claimed.
    await waitFor('no probe rows left', async () => (await sql.query("SELECT count(*) AS n FROM jobs WHERE class = 'H9Probe'")).rows[0].n === '0');
    expect(runs.map((r) => r.n).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(runs.some((r) => r.on === 'b')).toBe(true);
    expect(runs.some((r) => r.on === 'a')).toBe(true);
    const after = Number((await sql.query("SELECT coalesce(sum(value), 0) AS n FROM job_counters WHERE name = 'processed'")).rows[0].n);
    expect(after - before).toBeGreaterThanOrEqual(40);
    // Nothing of the job system in either data dir's SQLite.
    for (const s of [a, b]) {
      const db = databaseOf(s.server.ctx.store);
      expect(db.get('SELECT count(*) AS n FROM jobs')).toEqual({ n: 0 });
      expect(db.get('SELECT count(*) AS n FROM job_counters')).toEqual({ n: 0 });
    }
  });

  it('both instances heartbeat in the database and see each other as processes', async () => {
    const rows = await sql.query('SELECT count(*) AS n FROM job_processes');
    expect(Number(rows.rows[0].n)).toBe(2);
  });

  it('keep at most one periodic stuck-builds job waiting, though both schedule it', async () => {
    // Both enqueue every 50 ms; a waiting one makes the other's push a no-op (pushUnlessWaiting).
    let seen = 0;
    for (let i = 0; i < 40; i++) {
      const r = await sql.query("SELECT count(*) AS n FROM jobs WHERE queue = 'stuck_builds' AND class = 'StuckCiBuildsWorker' AND claimed_by IS NULL AND state = 'queued'");
      seen = Math.max(seen, Number(r.rows[0].n));
      await new Promise((res) => setTimeout(res, 10));
    }
    expect(seen).toBeLessThanOrEqual(1);
    const done = await sql.query("SELECT coalesce(sum(value), 0) AS n FROM job_counters WHERE name = 'processed'");
    expect(Number(done.rows[0].n)).toBeGreaterThan(40);
  });

  it('fail a stuck build once, though both instances sweep for it', async () => {
    const project = await createProject(a, 'stuck');
    const build = await createBuild(a, project.id, { timeout: 1 });
    const finished = { a: 0, b: 0 };
    a.server.ctx.events.on('build:finished', (x) => void (x.id === build.id && finished.a++));
    b.server.ctx.events.on('build:finished', (x) => void (x.id === build.id && finished.b++));
    const runner = await registerRunner(a, project.runners_token);
    const taken = await runnerJson(`${a.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner.token });
    expect(taken.json.id).toBe(build.id);
    await waitFor('the stuck build failed', async () => (await sql.query('SELECT status FROM builds WHERE id = $1', [build.id])).rows[0].status === 'failed', 20_000);
    // Several more sweeps on both: a second failure would be a second finish each instance hears.
    const processed = async () => Number((await sql.query("SELECT value FROM job_counters WHERE name = 'processed'")).rows[0].value);
    const then = await processed();
    await waitFor('six more sweeps', async () => (await processed()) >= then + 6);
    await waitFor('both instances heard the finish', () => finished.a >= 1 && finished.b >= 1);
    expect(finished).toEqual({ a: 1, b: 1 });
  });
});
