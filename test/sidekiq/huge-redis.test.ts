// Reading a huge Sidekiq never stalls it: a real redis-server with 1,000,000 queue names and 10,000
// processes, sampled through a sidekiq connection's source. Redis's own SLOWLOG must hold none of
// our commands past a bound far above any bounded call, even one descheduled on a loaded machine
// (~0.1 ms each; 100 ms seen with a load average of 14 on 2 cores), and below one read of the whole
// set (SMEMBERS of a million names: 0.9-1.8 s here); and no command that reads a whole set may be
// sent at all (INFO commandstats), which holds on any machine, however fast. Only max-queues
// names are kept, the first in byte order, the same ones every sample. How long other clients wait
// is measured in bench/sidekiq-huge.ts, not asserted here.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { SidekiqSource } from '../../server/sidekiq/source.ts';
import { DEFAULT_CLIENT_BOUNDS } from '../../server/redis/bounded-client.ts';

const QUEUES = 1_000_000;
const PROCESSES = 10_000;
const SLOWLOG_BOUND_US = 250_000;
const name = (i: number) => `q${String(i).padStart(7, '0')}`;

let redis: TestRedis;
let r: Redis;
beforeAll(async () => {
  redis = await startRedis();
  r = new Redis(redis.url);
  // Inserted in an order unlike byte order, so a reader keeping the first it happens to see fails.
  for (let from = 0; from < QUEUES; from += 10_000) {
    const names: string[] = [];
    for (let i = from; i < from + 10_000; i++) names.push(name((i * 7919) % QUEUES));
    await r.sadd('queues', ...names);
  }
  const p = r.pipeline();
  for (let i = 0; i < PROCESSES; i++) {
    const id = `host-${i}:${i}:abc`;
    p.sadd('processes', id).hset(id, 'info', JSON.stringify({ hostname: `host-${i}`, pid: i, concurrency: 5, queues: ['default'], started_at: 1_700_000_000 }), 'busy', '1', 'beat', '1700000000', 'quiet', 'false');
  }
  p.lpush(`queue:${name(3)}`, JSON.stringify({ class: 'A', args: [], jid: 'x', enqueued_at: 1_700_000_000 }));
  await p.exec();
}, 120_000);
afterAll(async () => {
  r?.disconnect();
  await redis?.stop();
});

it('a sample of a 1M-queue, 10k-process Redis runs no command past the bound and keeps only the first max-queues names', async () => {
  const limits = { maxQueues: 1000, maxProcesses: 500, days: 7, maxNameBytes: 256 };
  const source = new SidekiqSource({ url: redis.url, password: '', namespace: '' }, { timeoutMs: 60_000, limits, reply: DEFAULT_CLIENT_BOUNDS });
  try {
    await r.config('SET', 'slowlog-log-slower-than', String(SLOWLOG_BOUND_US));
    await r.slowlog('RESET');
    await r.config('RESETSTAT');
    const first = await source.snapshot();
    const second = await source.snapshot();
    const slow = (await r.slowlog('GET', 100)) as [number, number, number, string[], string, string][];
    // Entry: id, time, microseconds, arguments, client address, client name.
    expect(slow.filter((e) => e[5] === 'jobscope-readonly').map((e) => `${e[3][0]} ${e[2]} µs`)).toEqual([]);
    const stats = await r.info('commandstats');
    expect(stats).not.toMatch(/cmdstat_(smembers|sinter|sunion|sdiff|keys|lrange|hgetall):/);
    expect(stats).toMatch(/cmdstat_sscan:/);

    expect(first.queuesTotal).toBe(QUEUES);
    expect(first.processesTotal).toBe(PROCESSES);
    expect(first.queues.map((q) => q.name)).toEqual(Array.from({ length: 1000 }, (_, i) => name(i)));
    expect(first.queues[3]).toMatchObject({ name: name(3), size: 1, oldestEnqueuedAt: 1_700_000_000 });
    expect(first.processes).toHaveLength(500);
    expect(first.processes.map((p) => p.identity)).toEqual([...first.processes.map((p) => p.identity)].sort());
    // The same subset from sample to sample: charts stay continuous.
    expect(second.queues.map((q) => q.name)).toEqual(first.queues.map((q) => q.name));
    expect(second.processes.map((p) => p.identity)).toEqual(first.processes.map((p) => p.identity));
  } finally {
    source.close();
  }
}, 180_000);
