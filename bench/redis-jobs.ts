// Benchmark: the job system on Redis. No-op jobs (SyntheticJob, duration_ms 0) go through
// the real JobSystem on the real RedisJobBackend, enqueued one per call with `jobs.enqueue` (what
// POST /api/v3/sim/jobs calls), fetched, run and acknowledged with the configured concurrency. The
// reference is a bare ioredis client doing the same Redis round trips per job, in the same run on the
// same redis-server (a child process). Figure: jobs/s from the first enqueue to the last end written.
// Goal: >= 0.7x the reference.
//
// In process, not `jobscope serve` in a child: a job's end (its ack written) is only seen here, so
// its latency (enqueue to done) needs no extra round trip, and HTTP would cost ours a hop the bare
// loop has not. Both sides then share this process's core, Redis has the other.
//
// The bare reference does what our Redis path does, since Sidekiq's default BRPOP would lose a job
// on a crash (we follow GitLab's reliable fetch): MULTI LPUSH + SADD queues (Sidekiq's client) +
// SADD of a queue set (ours: jobscope:queues); LMOVE queue → working list; then MULTI LREM of the
// working list + INCRBY of the total and the day's counter + EXPIRE (Sidekiq's stats). Its consumers
// are `concurrency` loops on one connection (ours uses one), woken by a local enqueue when idle.
// It uses its own queue, working list and counter keys, which our servers do not serve. It is the
// plain per-job loop: ours fetches for all free slots in one script call and writes the ends of jobs
// that finish together in one MULTI, so it can beat it (fewer socket writes, which dominate here).
//
// Load: a closed loop keeps 4 × concurrency jobs enqueued and not yet done, so no slot idles for want of work
// and latency measures the system rather than a backlog (p50 is about that window / throughput).
//   node --import tsx bench/redis-jobs.ts [--quick]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { latencyStats, log, round, type BenchResult } from './lib/harness.ts';
import { startRedis } from '../test/helpers/redis.ts';
import { resolveConfig } from '../server/config.ts';
import { systemClock } from '../server/clock.ts';
import { openStore } from '../server/store/index.ts';
import { AppEvents } from '../server/context.ts';
import { createDomain } from '../server/domain/index.ts';
import { sqliteDomainBackend } from '../server/store/sqlite/domain-backend.ts';
import { JobSystem } from '../server/jobs/job-system.ts';
import { registerBuiltins } from '../server/jobs/builtin/index.ts';
import { SYNTHETIC } from '../server/jobs/builtin/synthetic.ts';
import { RedisJobBackend } from '../server/store/redis/job-backend.ts';
import type { Job, JobCounters } from '../server/jobs/types.ts';

const GOAL_RATIO = 0.7;
const QUEUE = 'bench';
const BARE_QUEUE = 'bench-bare';
const BARE_WORKING = 'bench-bare:working';
const FIVE_YEARS_S = 5 * 365 * 24 * 3600;

/** One way to run jobs: enqueue one, and hear of each job's end. */
interface Side {
  /** Enqueues one no-op job; resolves to its id once stored. */
  enqueue(): Promise<string>;
  /** Set by drive(): called with a job's id once its end is written. */
  onDone: (id: string) => void;
}

interface Run {
  ms: number;
  latencies: number[];
}

/** Runs `n` jobs with at most `window` of them enqueued and not done; rejects when no job ends for `stallMs`. */
function drive(side: Side, n: number, window: number, stallMs = 30_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const sentAt = new Map<string, number>();
    // A job may end before its enqueue's answer is handled (the answers arrive in one read).
    const doneEarly = new Map<string, number>();
    const latencies: number[] = [];
    let issued = 0;
    let done = 0;
    let seen = 0;
    const t0 = performance.now();
    const watch = setInterval(() => {
      if (done === seen) {
        clearInterval(watch);
        reject(new Error(`no job ended in ${stallMs} ms (${done} of ${n} done, ${issued} enqueued)`));
      }
      seen = done;
    }, stallMs);
    const fill = () => {
      while (issued < n && issued - done < window) {
        issued++;
        const s = performance.now();
        side.enqueue().then(
          (id) => {
            const e = doneEarly.get(id);
            if (e === undefined) sentAt.set(id, s);
            else {
              doneEarly.delete(id);
              latencies.push(e - s);
            }
          },
          (err: unknown) => {
            clearInterval(watch);
            reject(err as Error);
          },
        );
      }
    };
    side.onDone = (id) => {
      const t = performance.now();
      const s = sentAt.get(id);
      if (s === undefined) doneEarly.set(id, t);
      else {
        sentAt.delete(id);
        latencies.push(t - s);
      }
      if (++done === n) {
        clearInterval(watch);
        resolve({ ms: t - t0, latencies });
      } else fill();
    };
    fill();
  });
}

/** The real adapter; only tells the bench when a job's end is written. */
class ObservedRedisJobBackend extends RedisJobBackend {
  onAck: (job: Job) => void = () => undefined;

  override async ack(job: Job, counters: JobCounters): Promise<void> {
    await super.ack(job, counters);
    this.onAck(job);
  }
}

/** The job system as `serve --redis` builds it (app.ts), with Jobscope's own kinds and their queues. */
async function startJobSystem(redisUrl: string) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-redis-jobs-'));
  const config = resolveConfig({ dataDir, redisUrl, logLevel: 'silent' }, {});
  const store = openStore(config);
  const clock = systemClock;
  const backend = new ObservedRedisJobBackend({
    url: redisUrl,
    processTtlS: config.redisProcessTtlS,
    now: () => clock.now(),
    kindOf: (cls) => jobs.kindOfClass(cls),
    maxQueuesRead: config.sidekiqMaxQueues,
    Redis,
  });
  const jobs: JobSystem = new JobSystem(config, backend, { clock });
  jobs.log = { warn: (obj, msg) => log(`job system: ${msg ?? ''} ${String((obj as { err?: unknown }).err ?? '')}`) };
  registerBuiltins(jobs, { config, domain: createDomain(sqliteDomainBackend(store), new AppEvents()) });
  await jobs.start();
  const side: Side = {
    async enqueue() {
      // What POST /api/v3/sim/jobs {"queue": "bench"} calls.
      const [job] = await jobs.enqueue(SYNTHETIC, { duration_ms: 0 }, { queue: QUEUE, count: 1 });
      return job!.jid!;
    },
    onDone: () => undefined,
  };
  backend.onAck = (job) => side.onDone(job.jid!);
  return {
    side,
    /** Runs one job to its end; answers the length of its payload in Redis. */
    async probe(): Promise<number> {
      const done = new Promise<void>((resolve) => (side.onDone = () => resolve()));
      const [job] = await jobs.enqueue(SYNTHETIC, { duration_ms: 0 }, { queue: QUEUE, count: 1 });
      await done;
      return Buffer.byteLength(job!.raw!);
    },
    concurrency: jobs.pool.concurrency,
    identity: backend.identity,
    async stop() {
      await jobs.stop();
      store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The same round trips with plain ioredis; see the header for which and why. */
class BareJobs implements Side {
  onDone: (id: string) => void = () => undefined;
  private readonly redis: Redis;
  private seq = 0;
  /** Bumped by every stored enqueue: a consumer whose LMOVE found nothing retries if it moved meanwhile. */
  private pushes = 0;
  private idle: (() => void)[] = [];
  private stopped = false;
  private readonly pad: string;

  constructor(url: string, payloadBytes: number, concurrency: number) {
    this.redis = new Redis(url, { connectionName: 'bench-bare' });
    // `{"jid":"<24 hex>","pad":"…"}`, as long as one of our payloads.
    this.pad = 'x'.repeat(Math.max(0, payloadBytes - '{"jid":"","pad":""}'.length - 24));
    for (let i = 0; i < concurrency; i++) {
      this.consume().catch((err: unknown) => {
        if (!this.stopped) log(`bare consumer: ${String(err)}`);
      });
    }
  }

  async enqueue(): Promise<string> {
    const id = (++this.seq).toString(16).padStart(24, '0');
    const raw = `{"jid":"${id}","pad":"${this.pad}"}`;
    await this.redis.multi().lpush(`queue:${BARE_QUEUE}`, raw).sadd('queues', BARE_QUEUE).sadd('bench-bare:queues', BARE_QUEUE).exec();
    this.pushes++;
    this.idle.shift()?.();
    return id;
  }

  private async consume(): Promise<void> {
    while (!this.stopped) {
      const seen = this.pushes;
      const raw = await this.redis.lmove(`queue:${BARE_QUEUE}`, BARE_WORKING, 'RIGHT', 'LEFT');
      if (raw === null) {
        if (this.pushes === seen) await new Promise<void>((resolve) => this.idle.push(resolve));
        continue;
      }
      // The no-op job, then its end.
      const day = new Date().toISOString().slice(0, 10);
      await this.redis.multi().lrem(BARE_WORKING, 1, raw).incrby('bench-bare:stat:processed', 1).incrby(`bench-bare:stat:processed:${day}`, 1).expire(`bench-bare:stat:processed:${day}`, FIVE_YEARS_S).exec();
      this.onDone(raw.slice(8, 32));
    }
  }

  stop(): void {
    this.stopped = true;
    for (const wake of this.idle.splice(0)) wake();
    this.redis.disconnect();
  }
}

/** With `npm run bench -- --cpu-prof`: a V8 profile of this process while `fn` runs (ours runs in process). */
async function profiled<T>(tag: string, fn: () => Promise<T>): Promise<T> {
  const root = process.env.JOBSCOPE_BENCH_CPU_PROF;
  if (!root) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(root, { recursive: true });
    const file = path.join(root, `${tag}-${Date.now()}.cpuprofile`);
    fs.writeFileSync(file, JSON.stringify(profile));
    log(`CPU profile: ${file}`);
    session.disconnect();
  }
}

export async function run(opts: { quick: boolean }): Promise<BenchResult> {
  const n = opts.quick ? 4_000 : 20_000;
  const warmup = opts.quick ? 500 : 2_000;
  // Many short rounds, alternating: the machine is shared, and its load moves within seconds.
  const rounds = opts.quick ? 4 : 10;
  const redis = await startRedis();
  const check = new Redis(redis.url, { connectionName: 'bench-check' });
  let ours: Awaited<ReturnType<typeof startJobSystem>> | undefined;
  let bare: BareJobs | undefined;
  try {
    ours = await startJobSystem(redis.url);
    const concurrency = ours.concurrency;
    const window = 4 * concurrency;
    // The bare payload is as long as ours.
    const payloadBytes = await ours.probe();
    bare = new BareJobs(redis.url, payloadBytes, concurrency);
    log(`redis-server on port ${redis.port}; ${n} no-op jobs a side in ${rounds} alternating rounds, concurrency ${concurrency}, window ${window}, payload ${payloadBytes} B`);

    await drive(ours.side, warmup, window);
    await drive(bare, warmup, window);
    const mine: Run[] = [];
    const ref: Run[] = [];
    for (let r = 0; r < rounds; r++) {
      const each = Math.round(n / rounds);
      // Alternate which goes first, so a change of load on the machine hits both alike.
      const sides = r % 2 === 0 ? (['ours', 'bare'] as const) : (['bare', 'ours'] as const);
      for (const s of sides) {
        // One round profiled is enough to see where the time goes.
        if (s === 'ours') mine.push(r === 0 ? await profiled('redis-jobs-ours', () => drive(ours!.side, each, window)) : await drive(ours.side, each, window));
        else ref.push(r === 0 ? await profiled('redis-jobs-bare', () => drive(bare!, each, window)) : await drive(bare, each, window));
      }
    }

    // Every job ran once and its end is written: counters in Redis, nothing left queued or in flight.
    const oursTotal = warmup + mine.reduce((a, x) => a + x.latencies.length, 0) + 1;
    const bareTotal = warmup + ref.reduce((a, x) => a + x.latencies.length, 0);
    const [processed, bareProcessed, left, inFlight, bareLeft, bareInFlight] = await Promise.all([
      check.get('stat:processed'),
      check.get('bench-bare:stat:processed'),
      check.llen(`queue:${QUEUE}`),
      check.llen(`working:${ours.identity}`),
      check.llen(`queue:${BARE_QUEUE}`),
      check.llen(BARE_WORKING),
    ]);
    if (Number(processed) !== oursTotal || left !== 0 || inFlight !== 0) throw new Error(`job system: stat:processed ${processed} (want ${oursTotal}), ${left} queued, ${inFlight} in flight`);
    if (Number(bareProcessed) !== bareTotal || bareLeft !== 0 || bareInFlight !== 0) throw new Error(`bare: processed ${bareProcessed} (want ${bareTotal}), ${bareLeft} queued, ${bareInFlight} in flight`);

    const rate = (runs: Run[]) => runs.reduce((a, x) => a + x.latencies.length, 0) / (runs.reduce((a, x) => a + x.ms, 0) / 1000);
    const ourRate = rate(mine);
    const refRate = rate(ref);
    const lat = latencyStats(mine.flatMap((x) => x.latencies));
    const refLat = latencyStats(ref.flatMap((x) => x.latencies));
    const ratio = ourRate / refRate;
    return {
      name: 'Redis job system: no-op jobs enqueued, fetched and acked (jobs/s)',
      value: round(ourRate, 0),
      unit: 'jobs/s',
      reference: round(refRate, 0),
      ratio: round(ratio),
      goal: `>= ${GOAL_RATIO}x a bare ioredis loop`,
      pass: ratio >= GOAL_RATIO,
      p50_ms: round(lat.p50, 3),
      p99_ms: round(lat.p99, 3),
      reference_p50_ms: round(refLat.p50, 3),
      reference_p99_ms: round(refLat.p99, 3),
      ratio_note: 'ratio = our jobs/s / a bare ioredis client doing the same round trips (LPUSH, LMOVE into a working list, LREM + INCRBY), higher is better; latency is enqueue to end written',
      jobs: n,
      concurrency,
      window,
      payload_bytes: payloadBytes,
    };
  } finally {
    bare?.stop();
    await ours?.stop();
    check.disconnect();
    await redis.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await run({ quick: process.argv.includes('--quick') });
  process.stdout.write(
    `${r.name}\n  jobscope: ${r.value} jobs/s, latency p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms (${r.jobs} jobs, concurrency ${r.concurrency}, window ${r.window})\n` +
      `  bare ioredis, same round trips: ${r.reference} jobs/s, latency p50 ${r.reference_p50_ms} ms, p99 ${r.reference_p99_ms} ms\n` +
      `  ratio: ${r.ratio}x   goal ${r.goal}: ${r.pass ? 'PASS' : 'FAIL'}\n  load average: ${os.loadavg().map((x) => round(x, 1)).join(' / ')}\n`,
  );
  process.exit(0);
}
