// `serve --redis` through Redis outages, on a real redis-server that persists every write
// (appendfsync always) and is killed with SIGKILL and restarted on its port and files, or frozen
// with SIGSTOP: no job is lost and none runs twice, without restarting the server; enqueues meanwhile
// answer 503 with Retry-After; the job system resumes by itself. Jobs are counted by what ran: a
// kind registered by the test records each run of its `n`.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import type { TestServer } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { http } from '../helpers/http.ts';
import { RedisJobBackend } from '../../server/store/redis/job-backend.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

const PERSIST = ['--appendonly', 'yes', '--appendfsync', 'always'];

const redises: TestRedis[] = [];
const servers = useServers();
const clients: Redis[] = [];
afterEach(async () => {
  await servers.closeAll();
  for (const c of clients.splice(0)) c.disconnect();
  for (const r of redises.splice(0)) await r.stop();
});

async function persistentRedis(): Promise<TestRedis> {
  const r = await startRedis(PERSIST);
  redises.push(r);
  return r;
}

/** kill -9, a pause while it is down, then the same port and files again. */
async function killAndRestart(r: TestRedis, downMs: number): Promise<TestRedis> {
  await r.kill9();
  await sleep(downMs);
  await r.restart();
  return r;
}

/** A server on the Redis whose `tally` jobs record each run of their `n` in `runs`. */
async function tallyServer(url: string, runs: Map<number, number>, overrides: Record<string, unknown> = {}): Promise<TestServer> {
  const s = await servers.start({
    redisUrl: url,
    stuckBuildsEveryMs: 0,
    artifactExpiryEveryMs: 0,
    runnerContactEveryMs: 0,
    jobPollMs: 20,
    jobConcurrency: 20,
    redisBeatMs: 200,
    ...overrides,
  });
  s.server.ctx.jobs.register('tally', {
    class: 'TallyJob',
    queue: 'tally',
    retry: 25,
    declare: false,
    async perform(args) {
      const n = args.n as number;
      runs.set(n, (runs.get(n) ?? 0) + 1);
      await sleep(typeof args.ms === 'number' ? args.ms : 1 + (n % 7));
    },
  });
  return s;
}

async function enqueueTally(s: TestServer, from: number, count: number, ms?: number): Promise<void> {
  for (let i = from; i < from + count; i += 200) {
    const batch = [];
    for (let n = i; n < Math.min(from + count, i + 200); n++) batch.push(s.server.ctx.jobs.enqueue('tally', ms === undefined ? { n } : { n, ms }));
    await Promise.all(batch);
  }
}

async function workingEntries(c: Redis): Promise<number> {
  let n = 0;
  for (const key of await c.keys('working:*')) n += await c.llen(key);
  return n;
}

function twice(runs: Map<number, number>): number[] {
  return [...runs].filter(([, k]) => k > 1).map(([n]) => n);
}

const enqueueOverHttp = (s: TestServer) => http(`${s.url}/api/v3/sim/jobs`, { json: { queue: 'default', count: 1 }, token: s.adminToken });

describe('serve --redis through Redis outages', () => {
  it('4,000 jobs, Redis killed with SIGKILL twice mid-run and restarted: each ran exactly once, counted once, none left in a working list; enqueues meanwhile answer 503', async () => {
    let redis = await persistentRedis();
    const runs = new Map<number, number>();
    const s = await tallyServer(redis.url, runs);
    await enqueueTally(s, 0, 4000);

    for (const at of [800, 2200]) {
      await waitFor(`${at} jobs ran`, async () => runs.size >= at, 60_000);
      await redis.kill9();
      const refused = await enqueueOverHttp(s);
      expect(refused.status, JSON.stringify(refused.body)).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((refused.body as { message: string }).message).toMatch(/Redis is unreachable .*try again/);
      const status = (await http(`${s.url}/api/app/status`, { token: s.adminToken })).body as { job_system: { state: string; message?: string } };
      expect(status.job_system.state).toBe('degraded');
      redis = await killAndRestart(redis, 300);
    }

    await waitFor('every job ran', async () => runs.size === 4000, 120_000, 100);
    const c = new Redis(redis.url);
    clients.push(c);
    await waitFor('no job left in a working list', async () => (await workingEntries(c)) === 0, 30_000, 100);
    expect(twice(runs)).toEqual([]);
    expect(await c.llen('queue:tally')).toBe(0);
    // Each end counted once, though some ends were written again after their reply was lost.
    expect(Number(await c.get('stat:processed'))).toBe(4000);
    await waitFor('status ok again', async () => ((await http(`${s.url}/api/app/status`, { token: s.adminToken })).body as { job_system: { state: string } }).job_system.state === 'ok');
    expect((await enqueueOverHttp(s)).status).toBe(202);
  });

  it('a frozen Redis (SIGSTOP): enqueue answers 503 with Retry-After instead of hanging, and works again after SIGCONT', async () => {
    const redis = await persistentRedis();
    const runs = new Map<number, number>();
    const s = await tallyServer(redis.url, runs);
    redis.pause();
    try {
      const r = await enqueueOverHttp(s);
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((r.body as { message: string }).message).toMatch(/no answer from Redis at 127\.0\.0\.1:\d+ within/);
      const m = await http(`${s.url}/api/v4/sidekiq/compound_metrics`, { token: s.adminToken });
      expect(m.status, JSON.stringify(m.body)).toBe(503);
    } finally {
      redis.resume();
    }
    await waitFor('enqueue accepted again', async () => (await enqueueOverHttp(s)).status === 202, 20_000, 200);
    await enqueueTally(s, 0, 50);
    await waitFor('the jobs ran', async () => runs.size === 50, 20_000);
    const c = new Redis(redis.url);
    clients.push(c);
    await waitFor('no job left in a working list', async () => (await workingEntries(c)) === 0, 20_000, 100);
    expect(twice(runs)).toEqual([]);
  });

  it('two servers on one Redis across a kill longer than the heartbeat TTL: every job runs once, none is taken from a live server', async () => {
    let redis = await persistentRedis();
    const runs = new Map<number, number>();
    const a = await tallyServer(redis.url, runs, { redisProcessTtlS: 3 });
    const b = await tallyServer(redis.url, runs, { redisProcessTtlS: 3 });
    // Long jobs: running on both servers when Redis dies, still running when it is back.
    await enqueueTally(a, 0, 40, 6000);
    await enqueueTally(a, 40, 400);
    await waitFor('both servers busy', async () => runs.size >= 40, 30_000);
    // Down for longer than the TTL: both heartbeat hashes have expired when Redis loads its files.
    redis = await killAndRestart(redis, 4000);
    await waitFor('every job ran', async () => runs.size === 440, 60_000, 100);
    const c = new Redis(redis.url);
    clients.push(c);
    await waitFor('no job left in a working list', async () => (await workingEntries(c)) === 0, 30_000, 100);
    // A while longer: a wrongly recovered job would run again meanwhile.
    await sleep(4000);
    expect(twice(runs)).toEqual([]);
    expect(Number(await c.get('stat:processed'))).toBe(440);
    expect(b.server.ctx.jobs.health().state).toBe('ok');
  });

  it('a process whose hash is missing right after an outage keeps its working list until the recovering server has seen Redis answer for a full TTL', async () => {
    let redis = await persistentRedis();
    const other = new RedisJobBackend({ url: redis.url, processTtlS: 3, now: () => Date.now(), kindOf: () => undefined, maxQueuesRead: 100, Redis });
    await other.recover();
    redis = await killAndRestart(redis, 200);
    await waitFor('the server reconnected', async () => other.servedQueues().then(
      () => true,
      () => false,
    ));
    // A process with jobs in flight whose hash expired during the outage and that has not re-asserted it yet.
    const c = new Redis(redis.url);
    clients.push(c);
    await c.sadd('jobscope:working', 'ghost');
    await c.lpush('working:ghost', JSON.stringify({ class: 'X', queue: 'q', jid: 'a1', args: [{}] }));
    expect(await other.recoverOrphans()).toBe(0);
    expect(await c.llen('working:ghost')).toBe(1);
    // A TTL of answers later, a hash still missing is a dead process's.
    await waitFor('the orphan recovered', async () => (await other.recoverOrphans()) === 1, 10_000, 200);
    expect(await c.llen('queue:q')).toBe(1);
    await other.leave();
  });

  it('a freeze shorter than the answer deadline but longer than a beat period also holds back recovery for a TTL', async () => {
    const redis = await persistentRedis();
    const other = new RedisJobBackend({ url: redis.url, processTtlS: 3, answerMs: 20_000, now: () => Date.now(), kindOf: () => undefined, maxQueuesRead: 100, Redis });
    await other.recover();
    const c = new Redis(redis.url);
    clients.push(c);
    await c.sadd('jobscope:working', 'ghost');
    await c.lpush('working:ghost', JSON.stringify({ class: 'X', queue: 'q', jid: 'a1', args: [{}] }));
    const beat = { hostname: 'h', pid: 1, tag: 't', labels: [], concurrency: 1, startedAt: Date.now(), queues: ['q'], work: [] };
    // No call fails: the beat is only answered late, after the freeze.
    redis.pause();
    const late = other.beat(beat);
    await sleep(1500);
    redis.resume();
    await late;
    expect(await other.recoverOrphans()).toBe(0);
    expect(await c.llen('working:ghost')).toBe(1);
    await other.leave();
  });
});
