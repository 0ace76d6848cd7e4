// The job system on PostgreSQL (server/store/pg/jobs.ts under server/jobs/job-system.ts), as the
// Redis tests check it on Redis, with the database as the oracle: jobs run, a failing one retries
// with backoff and ends in the dead set, counters are kept; two instances (two job systems on two
// pools) on one database run every job exactly once; and a process that stops beating mid-job (a
// kill -9: no leave, no ack) has its job run to its end by another instance once its heartbeat expires.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/server.ts';
import { resolveConfig } from '../../server/config.ts';
import { JobSystem } from '../../server/jobs/job-system.ts';
import { SYNTHETIC, syntheticJob } from '../../server/jobs/builtin/synthetic.ts';
import { openPgDatabase, type PgDatabase } from '../../server/store/pg/index.ts';
import { PgJobBackend } from '../../server/store/pg/job-backend.ts';
import { waitFor } from '../helpers/wait.ts';

const missing = postgresMissing();
const pg = usePostgres();
const dir = tempDir();

interface Instance {
  db: PgDatabase;
  jobs: JobSystem;
  backend: PgJobBackend;
  /** args.n of each `counted` job this instance ran, in the order it ran them. */
  ran: number[];
}

const open: Instance[] = [];
const dbs: PgDatabase[] = [];
let dbCount = 0;
const freshUrl = () => pg.createDatabase(`s${++dbCount}`);

async function instance(url: string, opts: { concurrency?: number; ttlMs?: number } = {}): Promise<Instance> {
  const db = await openPgDatabase(url, { max: 4 });
  const config = resolveConfig({ dataDir: dir, logLevel: 'silent', jobBackoffUnitMs: 1, jobPollMs: 20, queueForgetIdleMinutes: 0, jobConcurrency: opts.concurrency ?? 3 }, {});
  const backend = new PgJobBackend({ pool: db.pool, now: () => Date.now(), processTtlMs: opts.ttlMs ?? 60_000 });
  const jobs = new JobSystem(config, backend);
  const ran: number[] = [];
  jobs.register(SYNTHETIC, syntheticJob);
  // A declared queue: every instance serves it from its start, wherever a job was pushed.
  jobs.register('counted', { class: 'CountedJob', queue: 'counted', retry: 0, perform: async (args) => {
    await new Promise((r) => setTimeout(r, 2));
    ran.push(args.n as number);
  } });
  await jobs.start();
  const inst = { db, jobs, backend, ran };
  open.push(inst);
  return inst;
}

afterEach(async () => {
  for (const { jobs, db } of open.splice(0)) {
    await jobs.stop();
    await db.close();
  }
  for (const db of dbs.splice(0)) await db.close();
});
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

const rows = async (db: PgDatabase) =>
  (await db.pool.query<{ state: string; claimed_by: string | null; n: number }>(`SELECT state, claimed_by, count(*)::int AS n FROM jobs GROUP BY 1, 2 ORDER BY 1, 2`)).rows;

describe.skipIf(missing)(`the job system on PostgreSQL${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('runs jobs; a failing one retries with backoff and ends in the dead set; the counters are the database’s', async () => {
    const a = await instance(await freshUrl());
    expect(await a.jobs.enqueue(SYNTHETIC, {}, { queue: 'fine', count: 3 })).toHaveLength(3);
    await a.jobs.enqueue(SYNTHETIC, { fail: true }, { queue: 'flaky', retry: 2, class: 'FlakyJob' });
    await waitFor('the failing job in the dead set', async () => (await a.jobs.deadSize()) === 1);
    const [dead] = await a.jobs.dead(10);
    expect(dead).toMatchObject({ queue: 'flaky', class: 'FlakyJob', retry_count: 2 });
    expect(dead!.error).toContain('failed on purpose');
    // 3 fine runs + the failing one's first try and 2 retries, 3 of them failed; as written in the database.
    const view = await a.jobs.read();
    expect(view.counters()).toEqual({ processed: 6, failed: 3 });
    expect(await a.backend.retries()).toEqual([]);
    expect(await rows(a.db)).toEqual([{ state: 'dead', claimed_by: null, n: 1 }]);
    expect([...view.processes()].map((p) => [p.identity.pid, p.busy])).toEqual([[process.pid, 0]]);
    // Retried from the dead set, it runs again and dies again.
    expect(await a.jobs.retryDead()).toBe(1);
    await waitFor('the retried job dead again', async () => (await a.jobs.read()).counters().processed === 7 && (await a.jobs.deadSize()) === 1);
    await a.jobs.stop();
    expect((await a.db.pool.query('SELECT * FROM job_processes')).rowCount).toBe(0);
  });

  it('enqueueOnce pushes a periodic job only while none of its kind waits, though the job system mirrors no waiting jobs', async () => {
    const a = await instance(await freshUrl(), { concurrency: 1 });
    // The only slot busy: ticks wait.
    await a.jobs.enqueue(SYNTHETIC, { duration_ms: 60_000 }, { queue: 'long' });
    await waitFor('the long job running', async () => (await a.backend.queueSize('long')) === 0);
    const answers: boolean[] = [];
    for (let i = 0; i < 4; i++) answers.push(await a.jobs.enqueueOnce(SYNTHETIC, { tick: i }));
    expect(answers).toEqual([true, false, false, false]);
    expect((await a.backend.queuePage('default', 0, 10))?.jobs.map((j) => j.args)).toEqual([{ tick: 0 }]);
  });

  it('two instances on one database run each of 200 jobs exactly once', async () => {
    const url = await freshUrl();
    const a = await instance(url);
    const b = await instance(url);
    for (let i = 0; i < 10; i++) {
      const s = i % 2 ? a : b;
      await Promise.all(Array.from({ length: 20 }, (_, k) => s.jobs.enqueue('counted', { n: i * 20 + k })));
    }
    await waitFor('200 processed and nothing left', async () => (await a.jobs.read()).counters().processed === 200 && (await rows(a.db)).length === 0, 30_000, 50);
    expect([...a.ran, ...b.ran].sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(a.ran.length).toBeGreaterThan(0);
    expect(b.ran.length).toBeGreaterThan(0);
    const procs = [...(await b.jobs.read()).processes()];
    expect(procs).toHaveLength(2);
  }, 60_000);

  it('a process that stops beating mid-job has its job run to its end by another instance once its heartbeat expires', async () => {
    const url = await freshUrl();
    // The victim: a process that took the job and was killed (no ack, no leave, no more beats).
    const victimDb = await openPgDatabase(url, { max: 2 });
    dbs.push(victimDb);
    const victim = new PgJobBackend({ pool: victimDb.pool, now: () => Date.now(), processTtlMs: 300 });
    await victim.push([{ queue: 'counted', class: 'CountedJob', kind: 'counted', args: { n: 42 }, retry: 0, retry_count: 0, created_at: Date.now(), enqueued_at: Date.now() }]);
    await victim.beat({ hostname: 'victim', pid: 1, tag: 'jobscope', labels: [], concurrency: 1, startedAt: Date.now(), queues: ['counted'], work: [] });
    expect(await victim.fetch(['counted'], 1)).toHaveLength(1);
    // The survivor beats (and recovers orphans) every 100 ms.
    const survivor = await instance(url, { ttlMs: 300 });
    await waitFor('the job run by the survivor', async () => survivor.ran.length > 0 && (await rows(survivor.db)).length === 0, 20_000, 50);
    expect(survivor.ran).toEqual([42]);
    expect((await survivor.jobs.read()).counters()).toEqual({ processed: 1, failed: 0 });
    expect([...(await survivor.jobs.read()).processes()].map((p) => p.identity.hostname)).not.toContain('victim');
  }, 30_000);
});
