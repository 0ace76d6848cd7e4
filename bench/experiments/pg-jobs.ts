// Benchmark: the job system on PostgreSQL (server/store/pg/jobs.ts) with two instances,
// against a bare SKIP LOCKED loop on the same throwaway cluster in the same run.
//
// Ours: two JobSystems on two pools (two instances), each --job-concurrency 10, drain N no-op jobs
// (SyntheticJob, duration_ms 0) pushed beforehand into one queue: fetch (jobscope_fetch_jobs, all
// free slots in one statement), run, ack (ends of one turn in one statement with the counters).
// Bare: two pools × 10 consumer loops, each job claimed alone (UPDATE … WHERE id = (SELECT … FOR
// UPDATE SKIP LOCKED LIMIT 1)) then deleted with the counter added: the same durable claim-then-end
// a crash-safe queue needs (a DELETE … RETURNING fetch would lose a job on a crash), one job per
// round trip. Both in this process (the database is a child: it gets the other core).
// Figure: jobs/s from the start to the last end written, wall and this process's CPU per job,
// alternating rounds, median of each side; ratio = ours / bare.
//   node --import tsx bench/experiments/pg-jobs.ts [--quick]
import os from 'node:os';
import type { Pool } from 'pg';
import { startPostgres } from '../../test/helpers/postgres.ts';
import { openPgDatabase, type PgDatabase } from '../../server/store/pg/index.ts';
import { PgJobBackend } from '../../server/store/pg/job-backend.ts';
import { resolveConfig } from '../../server/config.ts';
import { JobSystem } from '../../server/jobs/job-system.ts';
import { SYNTHETIC, syntheticJob } from '../../server/jobs/builtin/synthetic.ts';
import type { Job, JobCounters } from '../../server/jobs/types.ts';

const quick = process.argv.includes('--quick');
const N = quick ? 2000 : 10_000;
const ROUNDS = quick ? 2 : 3;
const CONCURRENCY = 10;

interface Sample {
  ms: number;
  cpuMs: number;
}

class Observed extends PgJobBackend {
  onAck: () => void = () => undefined;
  override async ack(job: Job, counters: JobCounters): Promise<void> {
    await super.ack(job, counters);
    this.onAck();
  }
}

async function fill(db: PgDatabase, table: 'jobs' | 'bare_jobs'): Promise<void> {
  await db.pool.query(
    table === 'jobs'
      ? `INSERT INTO jobs (queue, class, kind, args, state, retry, retry_count, created_at, enqueued_at)
         SELECT 'bench', 'SyntheticJob', 'synthetic', '{"duration_ms":0}', 'queued', 0, 0, i, i FROM generate_series(1, $1) i`
      : `INSERT INTO bare_jobs (payload) SELECT '{"duration_ms":0}' FROM generate_series(1, $1)`,
    [N],
  );
}

async function ours(url: string): Promise<Sample> {
  const dbs = [await openPgDatabase(url, { max: 4 }), await openPgDatabase(url, { max: 4 })];
  await dbs[0]!.pool.query('TRUNCATE jobs, job_processes, job_counters');
  await fill(dbs[0]!, 'jobs');
  const config = resolveConfig({ dataDir: os.tmpdir(), logLevel: 'silent', jobConcurrency: CONCURRENCY, queueForgetIdleMinutes: 0 }, {});
  let done = 0;
  let finish: () => void = () => undefined;
  const all = new Promise<void>((r) => (finish = r));
  const systems = dbs.map((db) => {
    const backend = new Observed({ pool: db.pool, now: () => Date.now() });
    backend.onAck = () => ++done === N && finish();
    const jobs = new JobSystem(config, backend);
    jobs.register(SYNTHETIC, { ...syntheticJob, queue: 'bench', declare: true });
    return jobs;
  });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(systems.map((s) => s.start()));
  await all;
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  for (const s of systems) await s.stop();
  for (const db of dbs) await db.close();
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

async function bareLoop(pool: Pool): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ id: number; payload: unknown }>(
      `UPDATE bare_jobs SET claimed_by = 'bare' WHERE id = (SELECT id FROM bare_jobs WHERE claimed_by IS NULL ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING id, payload`,
    );
    if (rows.length === 0) return;
    await pool.query(
      `WITH gone AS (DELETE FROM bare_jobs WHERE id = $1)
       INSERT INTO bare_counters (name, value) VALUES ('processed', 1) ON CONFLICT (name) DO UPDATE SET value = bare_counters.value + 1`,
      [rows[0]!.id],
    );
  }
}

async function bare(url: string): Promise<Sample> {
  const dbs = [await openPgDatabase(url, { max: CONCURRENCY }), await openPgDatabase(url, { max: CONCURRENCY })];
  await dbs[0]!.pool.query('TRUNCATE bare_jobs, bare_counters');
  await fill(dbs[0]!, 'bare_jobs');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(dbs.flatMap((db) => Array.from({ length: CONCURRENCY }, () => bareLoop(db.pool))));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const left = (await dbs[0]!.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM bare_jobs')).rows[0]!.n;
  if (left !== 0) throw new Error(`bare loop left ${left} jobs`);
  for (const db of dbs) await db.close();
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const pg = await startPostgres();
  try {
    const setup = await openPgDatabase(pg.url, { max: 1 });
    await setup.pool.query(`CREATE TABLE bare_jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload json NOT NULL, claimed_by text);
      CREATE INDEX bare_jobs_waiting ON bare_jobs (id) WHERE claimed_by IS NULL;
      CREATE TABLE bare_counters (name text PRIMARY KEY, value bigint NOT NULL)`);
    await setup.close();
    const sides: Record<'ours' | 'bare', Sample[]> = { ours: [], bare: [] };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating, so a change of load on the shared machine falls on both sides alike.
      sides.ours.push(await ours(pg.url));
      sides.bare.push(await bare(pg.url));
    }
    const rate = (s: Sample[]) => median(s.map((x) => N / (x.ms / 1000)));
    const cpuPerJob = (s: Sample[]) => median(s.map((x) => (x.cpuMs * 1000) / N));
    const out = {
      jobs: N,
      rounds: ROUNDS,
      ours_jobs_per_s: Math.round(rate(sides.ours)),
      bare_jobs_per_s: Math.round(rate(sides.bare)),
      ratio: Math.round((rate(sides.ours) / rate(sides.bare)) * 100) / 100,
      ours_cpu_us_per_job: Math.round(cpuPerJob(sides.ours)),
      bare_cpu_us_per_job: Math.round(cpuPerJob(sides.bare)),
      each_ours_ms: sides.ours.map((x) => Math.round(x.ms)),
      each_bare_ms: sides.bare.map((x) => Math.round(x.ms)),
      load: os.loadavg().map((x) => Math.round(x * 10) / 10),
    };
    console.log(JSON.stringify(out, null, 2));
  } finally {
    await pg.stop();
  }
}

await main();
