// Benchmark: one sample of a sidekiq connection (issue 12) — a real redis-server (child process)
// seeded in Sidekiq's layout with 1,000 queues and 500 live processes, read by the SidekiqSource the
// monitor uses (two pipelines, parsing, compound_metrics plus the extras). The reference is a bare
// ioredis client sending the same two pipelines and parsing nothing, in the same run. Goal: p99 < 50 ms.
//   node --import tsx bench/sidekiq.ts [--quick]
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { percentile, round as roundTo, log, type BenchResult } from './lib/harness.ts';
import { startRedis } from '../test/helpers/redis.ts';
import { SidekiqSource } from '../server/sidekiq/source.ts';
import { utcDays } from '../server/sidekiq/read.ts';

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
  const source = new SidekiqSource({ url: redis.url, password: '', namespace: '' }, { timeoutMs: 10_000, limits: { maxQueues: 10_000, maxProcesses: 5_000, days: DAYS } });
  try {
    await bare.connect();
    log(`seeding ${QUEUES} queues and ${PROCESSES} processes into redis-server on port ${redis.port}…`);
    await seed(bare);
    const check = await source.sample();
    if (!check.ok || Object.keys(check.metrics!.queues).length !== QUEUES || check.metrics!.processes.length !== PROCESSES) {
      throw new Error(`the sample is not what was seeded: ${check.message}`);
    }
    // Alternate rounds so load on the machine hits both sides alike.
    const ours: number[] = [];
    const ref: number[] = [];
    const rounds = 5;
    for (let i = 0; i < rounds; i++) {
      ours.push(...(await timed(n / rounds, i === 0 ? warmup : 0, async () => {
        const s = await source.sample();
        if (!s.ok) throw new Error(s.message);
      })));
      ref.push(...(await timed(n / rounds, i === 0 ? warmup : 0, () => bareRead(bare))));
    }
    const p99 = pct(ours, 99);
    const r99 = pct(ref, 99);
    return {
      name: 'sidekiq connection: one sample p99, 1,000 queues × 500 processes in Redis',
      value: round(p99),
      unit: 'ms',
      reference: round(r99),
      ratio: round(p99 / r99),
      goal: `p99 < ${GOAL_P99_MS} ms`,
      pass: p99 < GOAL_P99_MS,
      p50_ms: round(pct(ours, 50)),
      reference_p50_ms: round(pct(ref, 50)),
      ratio_note: 'ratio = our p99 (read + parse + compound_metrics and extras) / a bare ioredis client sending the same two pipelines (lower is better)',
      samples: n,
      queues: QUEUES,
      processes: PROCESSES,
    };
  } finally {
    source.close();
    bare.disconnect();
    await redis.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await run({ quick: process.argv.includes('--quick') });
  process.stdout.write(
    `${r.name}\n  jobscope: p50 ${r.p50_ms} ms, p99 ${r.value} ms (${r.samples} samples)\n` +
      `  bare ioredis, same pipelines: p50 ${r.reference_p50_ms} ms, p99 ${r.reference} ms\n  ratio (p99): ${r.ratio}×   goal ${r.goal}: ${r.pass ? 'PASS' : 'FAIL'}\n`,
  );
}
