// enqueueOnce on Redis (RedisJobBackend.pushUnlessWaiting, server/store/redis/push-once.ts) on a real
// redis-server: a periodic job is pushed only while none of its kind waits in its queue, checked and
// pushed in one step across servers. Without it every tick of every server pushed another one, and
// they piled up behind busy slots.
import { afterEach, describe, expect, it } from 'vitest';
import { redisBackends, useRedis } from '../helpers/redis.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { ManualClock } from '../../server/clock.ts';
import type { NewJob } from '../../server/jobs/backend.ts';
import type { JobSystem } from '../../server/jobs/job-system.ts';
import { waitFor } from '../helpers/wait.ts';

const redis = useRedis();

/** Payloads of `kind` waiting in `queue` (taken by no process), read straight from Redis. */
async function waiting(queue: string, kind: string): Promise<number> {
  const kindOf = (raw: string) => {
    try {
      return (JSON.parse(raw) as { jobscope_kind?: unknown }).jobscope_kind;
    } catch {
      return undefined;
    }
  };
  return (await redis.client.lrange(`queue:${queue}`, 0, -1)).filter((r) => kindOf(r) === kind).length;
}

describe('RedisJobBackend.pushUnlessWaiting', () => {
  const backend = redisBackends(redis, { kindOf: (cls) => (cls === 'StuckCiBuildsWorker' ? 'stuck_builds' : undefined) });
  const job = (queue: string, kind: string, n: number): NewJob => ({
    queue,
    class: kind === 'stuck_builds' ? 'StuckCiBuildsWorker' : 'SyntheticJob',
    kind,
    args: { n },
    retry: false,
    retry_count: 0,
    created_at: Date.now(),
    enqueued_at: Date.now(),
  });

  it('one waiting job per queue and kind, whichever of two backends push at once; a running one does not count', async () => {
    const a = await backend();
    const b = await backend();
    const pushed = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).pushUnlessWaiting(job('tick', 'synthetic', i))));
    expect(pushed.filter((j) => j !== null)).toHaveLength(1);
    expect(await waiting('tick', 'synthetic')).toBe(1);
    // Listed as a queue, as push() lists one (Sidekiq's Queue.all and the servers' served queues read these).
    expect(await redis.client.sismember('queues', 'tick')).toBe(1);
    expect(await redis.client.sismember('jobscope:queues', 'tick')).toBe(1);
    // Another kind in the queue, or the kind in another queue, is another job.
    expect(await a.pushUnlessWaiting(job('tick', 'other', 20))).not.toBeNull();
    expect(await a.pushUnlessWaiting(job('tock', 'synthetic', 21))).not.toBeNull();
    // Taken by a process (running), the job no longer waits: the next one is pushed.
    expect(await b.fetch(['tick'], 5)).toHaveLength(2);
    const again = await a.pushUnlessWaiting(job('tick', 'synthetic', 22));
    expect(again).toMatchObject({ queue: 'tick', kind: 'synthetic', args: { n: 22 } });
    expect((await a.queuePage('tick', 0, 5))?.jobs.map((j) => j.jid)).toEqual([again!.jid]);
  });

  it('a Sidekiq client’s payload of the kind’s class counts; text in another job’s args does not; a retry does not', async () => {
    const a = await backend();
    // As Sidekiq::Client.push writes it (no jobscope_kind): its kind is read from the class.
    await redis.client.lpush('queue:stuck_builds', JSON.stringify({ class: 'StuckCiBuildsWorker', args: [], retry: false, queue: 'stuck_builds', jid: 'f'.repeat(24), created_at: 1, enqueued_at: 1 }));
    expect(await a.pushUnlessWaiting(job('stuck_builds', 'stuck_builds', 1))).toBeNull();
    await redis.client.del('queue:stuck_builds');
    // Another job whose args name the kind and class, and something that is no job at all.
    await redis.client.lpush('queue:stuck_builds', JSON.stringify({ class: 'SyntheticJob', args: [{ note: 'stuck_builds StuckCiBuildsWorker', jobscope_kind: 'stuck_builds' }], queue: 'stuck_builds', jobscope_kind: 'synthetic' }));
    await redis.client.lpush('queue:stuck_builds', '"jobscope_kind":"stuck_builds" not json');
    const pushed = await a.pushUnlessWaiting(job('stuck_builds', 'stuck_builds', 2));
    expect(pushed).not.toBeNull();
    expect(await waiting('stuck_builds', 'stuck_builds')).toBe(1);
    // In the retry set it waits for its backoff, not in the queue: the schedule goes on.
    await redis.client.del('queue:stuck_builds');
    await a.push([job('stuck_builds', 'stuck_builds', 3)]);
    const [taken] = await a.fetch(['stuck_builds'], 1);
    await a.retryLater({ ...taken!, retry_count: 1, run_at: Date.now() + 60_000, failed_at: Date.now(), error: 'Error: x' }, { processed: 1, failed: 1 });
    expect(await redis.client.zcard('retry')).toBe(1);
    expect(await a.pushUnlessWaiting(job('stuck_builds', 'stuck_builds', 4))).not.toBeNull();
  });

  it('finds a waiting job behind a long queue (the script reads the list in pages)', async () => {
    const a = await backend();
    await a.push([job('mixed', 'stuck_builds', 0)]);
    await a.push(Array.from({ length: 450 }, (_, i) => job('mixed', 'synthetic', i + 1)));
    expect(await a.pushUnlessWaiting(job('mixed', 'stuck_builds', 999))).toBeNull();
    expect(await redis.client.llen('queue:mixed')).toBe(451);
  });
});

describe('the periodic schedule of two servers on one Redis', () => {
  const servers: TestServer[] = [];
  /** Each gate phase: jobs of kind `gate` hold their slot until `open()`. */
  let gate = deferred();
  let gateStarts = 0;
  afterEach(async () => {
    gate.open();
    for (const s of servers.splice(0)) await s.close();
    await redis.client.flushdb();
  });

  /** A server whose clock moves by hand (its ticks are ours to fire) with one slot, and the answers of its enqueueOnce calls. */
  async function server() {
    const clock = new ManualClock();
    const s = await startServer(
      { redisUrl: redis.url, jobConcurrency: 1, stuckBuildsEveryMs: 1000, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0, jobPollMs: 50, redisBeatMs: 1000 },
      { clock },
    );
    servers.push(s);
    const jobs = s.server.ctx.jobs;
    jobs.register('gate', {
      class: 'GateJob',
      queue: 'gate',
      retry: false,
      declare: false,
      async perform(_args, { signal }) {
        gateStarts++;
        await Promise.race([gate.promise, new Promise((r) => signal.addEventListener('abort', r, { once: true }))]);
      },
    });
    // The schedule calls jobs.enqueueOnce on each tick and drops the answer; kept here to await the ticks' pushes.
    const answers: Promise<boolean>[] = [];
    const enqueueOnce = jobs.enqueueOnce.bind(jobs);
    jobs.enqueueOnce = (kind, args) => {
      const r = Promise.resolve(enqueueOnce(kind, args));
      answers.push(r);
      return r;
    };
    return { s, clock, jobs, answers };
  }

  /** Both servers' only slots busy with a gate job each (each creates the queue, so each serves it). */
  async function fillSlots(a: JobSystem, b: JobSystem) {
    gate = deferred();
    const before = gateStarts;
    await a.enqueue('gate', {});
    await waitFor('a gate job running', async () => gateStarts === before + 1, 10_000);
    await b.enqueue('gate', {});
    await waitFor('both slots busy', async () => gateStarts === before + 2 && (await redis.client.llen('queue:gate')) === 0, 10_000);
  }

  type Served = Awaited<ReturnType<typeof server>>;
  /** Moves both clocks `n` periods, one at a time; the answers of every tick in them. */
  async function periods(a: Served, b: Served, n: number): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < n; i++) {
      a.clock.advance(1000);
      b.clock.advance(1000);
      out.push(...(await Promise.all([...a.answers.splice(0), ...b.answers.splice(0)])));
    }
    return out;
  }

  it('keeps at most one stuck-builds job waiting while the slots are busy, and pushes one again after it ran', async () => {
    const a = await server();
    const b = await server();
    await fillSlots(a.jobs, b.jobs);
    // Ten periods on both servers, their ticks firing together; each period's pushes end before the
    // next (a server skips a tick while its previous push is in flight, which would hide a pile-up).
    const first = await periods(a, b, 10);
    expect(first).toHaveLength(20);
    expect(first.filter(Boolean)).toHaveLength(1);
    expect(await waiting('stuck_builds', 'stuck_builds')).toBe(1);

    // The slots free: the waiting job runs (2 gate jobs + it processed) and the queue is empty.
    gate.open();
    await waitFor('the stuck-builds job run', async () => Number(await redis.client.get('stat:processed')) === 3 && (await redis.client.llen('queue:stuck_builds')) === 0, 10_000);
    await fillSlots(a.jobs, b.jobs);
    const next = await periods(a, b, 5);
    expect(next).toHaveLength(10);
    expect(next.filter(Boolean)).toHaveLength(1);
    expect(await waiting('stuck_builds', 'stuck_builds')).toBe(1);
  }, 30_000);
});

function deferred() {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
