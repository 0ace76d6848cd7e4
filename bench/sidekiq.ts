// Benchmark: one sample of a sidekiq connection — a real redis-server (child process)
// seeded in Sidekiq's layout with 1,000 queues and 500 live processes, read by the SidekiqSource the
// monitor uses (the read script, parsing, compound_metrics plus the extras). Goal: p99 < 50 ms.
// The reference is a bare ioredis client doing the same reads the plain way (the two pipelines that
// Sidekiq's API amounts to), parsing nothing: the ratio says how our whole sample compares with the
// least any client reading per command must do (below 1: the script beats that floor). Also in the
// same run, alternating: our sample on the fallback path (a read-only ACL user that may not run
// scripts, so the pipelines), the bare script call (the script's own floor), redis-server's CPU time
// per read each way (/proc), and how long one script call holds Redis (INFO commandstats), since a
// script is atomic: other clients wait through it.
//   node --import tsx bench/sidekiq.ts [--quick]
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { percentile, round as roundTo, log, type BenchResult } from './lib/harness.ts';
import { startRedis } from '../test/helpers/redis.ts';
import { SidekiqSource } from '../server/sidekiq/source.ts';
import { DEFAULT_CLIENT_BOUNDS } from '../server/redis/bounded-client.ts';
import { utcDays } from '../server/sidekiq/read.ts';
import { CHUNK_PROCESSES, CHUNK_QUEUES, READ_SCRIPT } from '../server/sidekiq/read-script.ts';

const GOAL_P99_MS = 50;
const QUEUES = 1000;
const PROCESSES = 500;
const DAYS = 30;
const pct = (xs: number[], p: number) => percentile([...xs].sort((a, b) => a - b), p);
const round = (x: number) => roundTo(x, 3);

/** Sidekiq's keys as a busy app leaves them: queues with a few jobs each, heartbeating processes, counters. */
async function seed(r: Redis): Promise<void> {
  const now = Date.now() / 1000;
  const p = r.pipeline();
  for (let q = 0; q < QUEUES; q++) {
    const name = `queue_${String(q).padStart(4, '0')}`;
    p.sadd('queues', name);
    for (let j = 0; j < 3; j++) {
      const job = { class: 'HardJob', args: [q, j, 'x'.repeat(40)], retry: true, queue: name, jid: `${q}`.padStart(12, '0') + `${j}`.padStart(12, '0'), created_at: now - j * 7, enqueued_at: now - j * 7 - q / 100 };
      p.lpush(`queue:${name}`, JSON.stringify(job));
    }
  }
  for (let i = 0; i < PROCESSES; i++) {
    const identity = `worker-${i}:${1000 + i}:${i.toString(16).padStart(12, '0')}`;
    const info = { hostname: `worker-${i}`, started_at: now - 3600, pid: 1000 + i, tag: 'app', concurrency: 10, queues: [`queue_${String(i % QUEUES).padStart(4, '0')}`, 'default'], labels: ['blue'], identity };
    p.sadd('processes', identity);
    p.hset(identity, 'info', JSON.stringify(info), 'busy', String(i % 10), 'beat', String(now), 'quiet', 'false', 'rss', '123456', 'rtt_us', '250');
  }
  p.set('stat:processed', '123456789').set('stat:failed', '4321');
  for (const d of utcDays(Date.now(), DAYS)) p.set(`stat:processed:${d}`, '1000').set(`stat:failed:${d}`, '10');
  for (let i = 0; i < 100; i++) {
    const payload = JSON.stringify({ class: 'FailingJob', args: [i], jid: `r${i}`, error_class: 'RuntimeError', error_message: 'boom', failed_at: now });
    p.zadd('retry', now + i, payload).zadd('dead', now - i, payload).zadd('schedule', now + 3600 + i, payload);
  }
  await p.exec();
}

/** The same reads as read.ts, with nothing parsed: what any client must at least do. */
async function bareRead(r: Redis): Promise<void> {
  const days = utcDays(Date.now(), DAYS);
  const first = await r
    .pipeline()
    .smembers('queues')
    .smembers('processes')
    .get('stat:processed')
    .get('stat:failed')
    .zcard('retry')
    .zcard('schedule')
    .zcard('dead')
    .mget(days.map((d) => `stat:processed:${d}`))
    .mget(days.map((d) => `stat:failed:${d}`))
    .exec();
  const queues = first![0]![1] as string[];
  const procs = first![1]![1] as string[];
  const second = r.pipeline();
  for (const q of queues) second.llen(`queue:${q}`).lindex(`queue:${q}`, -1);
  for (const id of procs) second.hmget(id, 'info', 'busy', 'beat', 'quiet', 'rss');
  await second.exec();
}

/** One chunk of the read script as read-script.ts sends it (CHUNK_QUEUES queues, CHUNK_PROCESSES processes), nothing parsed: the script's floor per chunk. */
async function bareScript(r: Redis, sha: string): Promise<void> {
  const queues = Array.from({ length: CHUNK_QUEUES }, (_, q) => `queue_${String(q).padStart(4, '0')}`);
  const ids = Array.from({ length: CHUNK_PROCESSES }, (_, i) => `worker-${i}:${1000 + i}:${i.toString(16).padStart(12, '0')}`);
  await r.evalsha(sha, 0, '', queues.length, ...queues, ...ids);
}

/** CPU time the redis-server process has used so far, ms (utime + stime from /proc, 10 ms ticks). */
function redisCpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Mean time Redis spent inside one EVALSHA (INFO commandstats): how long a script call holds it. */
async function evalshaUsPerCall(r: Redis): Promise<number> {
  const m = /cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/.exec(await r.info('commandstats'));
  return m ? Number(m[1]) : NaN;
}

async function timed(n: number, warmup: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

export async function run(opts: { quick: boolean }): Promise<BenchResult> {
  const n = opts.quick ? 60 : 300;
  const warmup = opts.quick ? 10 : 30;
  const redis = await startRedis();
  const bare = new Redis(redis.url, { lazyConnect: true });
  const limits = { maxQueues: 10_000, maxProcesses: 5_000, days: DAYS };
  const source = new SidekiqSource({ url: redis.url, password: '', namespace: '' }, { timeoutMs: 10_000, limits, reply: DEFAULT_CLIENT_BOUNDS });
  // A read-only user, as a careful admin would give Jobscope: no scripts, so the pipelines.
  const readerUrl = redis.url.replace('redis://', 'redis://reader@');
  const fallback = new SidekiqSource({ url: readerUrl, password: 'bench-pw', namespace: '' }, { timeoutMs: 10_000, limits, reply: DEFAULT_CLIENT_BOUNDS });
  try {
    await bare.connect();
    await bare.acl('SETUSER', 'reader', 'on', '>bench-pw', '~*', '+@read', '+@connection');
    log(`seeding ${QUEUES} queues and ${PROCESSES} processes into redis-server on port ${redis.port}…`);
    await seed(bare);
    const sha = (await bare.script('LOAD', READ_SCRIPT)) as string;
    for (const [src, how] of [[source, 'script'], [fallback, 'pipelines']] as const) {
      const check = await src.sample();
      if (!check.ok || Object.keys(check.metrics!.queues).length !== QUEUES || check.metrics!.processes.length !== PROCESSES) {
        throw new Error(`the sample is not what was seeded: ${check.message}`);
      }
      const s = await src.snapshot();
      if (s.readWith !== how) throw new Error(`expected a read with the ${how}, got ${s.readWith}`);
    }
    const sides = {
      ours: async () => {
        const s = await source.sample();
        if (!s.ok) throw new Error(s.message);
      },
      fallback: async () => {
        const s = await fallback.sample();
        if (!s.ok) throw new Error(s.message);
      },
      barePipelines: () => bareRead(bare),
      bareScript: () => bareScript(bare, sha),
    };
    type Side = keyof typeof sides;
    const times: Record<Side, number[]> = { ours: [], fallback: [], barePipelines: [], bareScript: [] };
    const cpuMs: Record<Side, number> = { ours: 0, fallback: 0, barePipelines: 0, bareScript: 0 };
    // Alternate rounds so load on the machine hits every side alike.
    const rounds = 5;
    for (let i = 0; i < rounds; i++) {
      for (const side of Object.keys(sides) as Side[]) {
        const before = redisCpuMs(redis.pid);
        times[side].push(...(await timed(n / rounds, i === 0 ? warmup : 0, sides[side])));
        cpuMs[side] += redisCpuMs(redis.pid) - before;
      }
    }
    // Every read of a side, warm-up included, is in its CPU time.
    const cpuPerRead = (side: Side) => roundTo(cpuMs[side] / (n + warmup), 2);
    const p99 = pct(times.ours, 99);
    const r99 = pct(times.barePipelines, 99);
    return {
      name: 'sidekiq connection: one sample p99, 1,000 queues × 500 processes in Redis',
      value: round(p99),
      unit: 'ms',
      reference: round(r99),
      ratio: round(p99 / r99),
      goal: `p99 < ${GOAL_P99_MS} ms`,
      pass: p99 < GOAL_P99_MS,
      p50_ms: round(pct(times.ours, 50)),
      reference_p50_ms: round(pct(times.barePipelines, 50)),
      ratio_note:
        'ratio = our p99 (one read script call + parse + compound_metrics and extras) / a bare ioredis client doing the same reads the plain way (the two pipelines, nothing parsed); below 1 = faster than any per-command client can be',
      fallback_p50_ms: round(pct(times.fallback, 50)),
      fallback_p99_ms: round(pct(times.fallback, 99)),
      bare_script_p50_ms: round(pct(times.bareScript, 50)),
      bare_script_p99_ms: round(pct(times.bareScript, 99)),
      redis_cpu_ms_per_read: { script: cpuPerRead('ours'), pipelines: cpuPerRead('fallback'), bare_pipelines: cpuPerRead('barePipelines') },
      redis_ms_per_script_call: roundTo((await evalshaUsPerCall(bare)) / 1000, 2),
      samples: n,
      queues: QUEUES,
      processes: PROCESSES,
    };
  } finally {
    source.close();
    fallback.close();
    bare.disconnect();
    await redis.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await run({ quick: process.argv.includes('--quick') });
  process.stdout.write(
    `${r.name}\n  jobscope (read script): p50 ${r.p50_ms} ms, p99 ${r.value} ms (${r.samples} samples)\n` +
      `  jobscope, scripts refused (pipelines): p50 ${r.fallback_p50_ms} ms, p99 ${r.fallback_p99_ms} ms\n` +
      `  bare ioredis, the same reads as two pipelines (reference): p50 ${r.reference_p50_ms} ms, p99 ${r.reference} ms\n` +
      `  bare ioredis, one read script chunk alone: p50 ${r.bare_script_p50_ms} ms, p99 ${r.bare_script_p99_ms} ms\n` +
      `  redis-server CPU per read (ms): ${JSON.stringify(r.redis_cpu_ms_per_read)}; Redis held per script call: ${r.redis_ms_per_script_call} ms\n` +
      `  ratio (p99, ours / reference): ${r.ratio}×   goal ${r.goal}: ${r.pass ? 'PASS' : 'FAIL'}\n`,
  );
}
