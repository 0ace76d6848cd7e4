// The job backend on PostgreSQL (server/store/pg/job-backend.ts) against a real throwaway cluster, step by
// step as the job system calls it; two backends on two pools stand for two instances:
// - fetch: up to max jobs in one step, first non-empty queue first, oldest first, each claimed;
//   16 fetches at once on two instances hand every job out exactly once;
// - ends: acks of one turn delete their rows and add their counters; retries wait for run_at and go
//   back once (two instances moving due retries at once move each job once); the dead set is kept
//   newest first and trimmed to `keep`; requeue, delete and clear act on their set only;
// - processes: a process that stops beating has its claims freed by another once its heartbeat
//   expires, and its jobs run next; a live process's claims are never taken; leave() frees its own;
// - views: queues in byte order with sizes, oldest enqueue time and the other processes serving
//   them, a queue's page in fetch order, one consistent read for the metrics.
import type { Pool } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { openPgDatabase, type PgDatabase } from '../../server/store/pg/index.ts';
import { PgJobBackend } from '../../server/store/pg/job-backend.ts';
import type { NewJob } from '../../server/jobs/backend.ts';
import type { Job } from '../../server/jobs/types.ts';
import { waitFor } from '../helpers/wait.ts';

const missing = postgresMissing();
const pg = usePostgres();

// One database for the file and two pools on it, opened at the first test; each test starts from
// empty job tables (TRUNCATE is much cheaper than a database made and migrated per test).
let pools: PgDatabase[] = [];
/** `n` instances (pools) on the file's database, its job tables empty. */
async function instances(n: number): Promise<PgDatabase[]> {
  if (pools.length === 0) {
    const url = await pg.createDatabase('jobs');
    pools = [await openPgDatabase(url, { max: 4, applicationName: 'instance-0' }), await openPgDatabase(url, { max: 4, applicationName: 'instance-1' })];
  }
  await pools[0]!.pool.query('TRUNCATE jobs, job_queues, job_processes, job_counters RESTART IDENTITY');
  return pools.slice(0, n);
}
afterAll(async () => {
  for (const db of pools) await db.close();
});

let clockMs = 1_700_000_000_000;
const now = () => clockMs;
const backend = (db: PgDatabase, opts: { ttlMs?: number; identity?: string } = {}) =>
  new PgJobBackend({ pool: db.pool, now, processTtlMs: opts.ttlMs ?? 60_000, identity: opts.identity });
const job = (queue: string, n: number, at = now()): NewJob => ({ queue, class: 'SyntheticJob', kind: 'synthetic', args: { n }, retry: 3, retry_count: 0, created_at: at, enqueued_at: at });
const ns = (jobs: Job[]) => jobs.map((j) => [j.queue, j.args.n]);
const beat = (b: PgJobBackend, queues: string[] = [], work: Job[] = []) =>
  b.beat({ hostname: 'h', pid: 1, tag: 't', labels: ['x'], concurrency: 5, startedAt: now(), queues, work: work.map((j, i) => ({ tid: `t${i}`, queue: j.queue, payload: JSON.stringify(j.args), runAt: now() })) });
const claimedBy = async (db: PgDatabase) =>
  (await db.pool.query<{ id: number; claimed_by: string | null }>('SELECT id, claimed_by FROM jobs ORDER BY id')).rows;

describe.skipIf(missing)(`PostgreSQL job backend${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('fetches up to max jobs in one step, from the first queues not empty, oldest first, and claims them', async () => {
    const [db] = await instances(1);
    const b = backend(db!);
    await b.recover();
    const pushed = await b.push([job('a', 1), job('a', 2), job('a', 3), job('b', 4), job('b', 5)]);
    expect(pushed.map((j) => j.id)).toEqual([...pushed.map((j) => j.id)].sort((x, y) => x - y));
    // A job enqueued earlier runs first whatever its id (one moved back from the retry set keeps its place by enqueued_at).
    await b.push([job('b', 0, now() - 1000)]);
    expect(ns(await b.fetch(['empty', 'a', 'b'], 4))).toEqual([['a', 1], ['a', 2], ['a', 3], ['b', 0]]);
    expect((await claimedBy(db!)).filter((r) => r.claimed_by === b.identity)).toHaveLength(4);
    expect(await b.queueSize('a')).toBe(0);
    expect(ns(await b.fetch(['a', 'b'], 4))).toEqual([['b', 4], ['b', 5]]);
    expect(await b.fetch(['a', 'b'], 4)).toEqual([]);
    expect(await b.fetch(['a', 'b'], 0)).toEqual([]);
    expect(await b.fetch([], 3)).toEqual([]);
    expect((await claimedBy(db!)).every((r) => r.claimed_by === b.identity)).toBe(true);
  });

  it('16 fetches at once on two instances over 600 jobs in three queues: each job handed out exactly once', async () => {
    const [da, db] = await instances(2);
    const a = backend(da!);
    const b = backend(db!);
    await a.push(Array.from({ length: 600 }, (_, i) => job(['q1', 'q2', 'q3'][i % 3]!, i)));
    const got = new Map<number, string>();
    const twice: number[] = [];
    const fetcher = async (be: PgJobBackend) => {
      for (let empty = 0; empty < 2; ) {
        const jobs = await be.fetch(['q3', 'q1', 'q2'], 7);
        if (jobs.length === 0) empty++;
        else empty = 0;
        for (const j of jobs) {
          if (got.has(j.id)) twice.push(j.id);
          got.set(j.id, be.identity);
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, i) => fetcher(i % 2 ? a : b)));
    expect(twice).toEqual([]);
    expect(got.size).toBe(600);
    // Both instances took part, and the database agrees with what each was handed.
    expect(new Set(got.values())).toEqual(new Set([a.identity, b.identity]));
    for (const r of await claimedBy(da!)) expect(r.claimed_by).toBe(got.get(r.id));
  });

  it('acks of one turn delete their jobs and add their counters together; recover() finds counters and queues', async () => {
    const [db] = await instances(1);
    const b = backend(db!);
    await b.push([1, 2, 3, 4].map((n) => job('a', n)));
    await b.addQueue('empty-but-listed', now());
    const jobs = await b.fetch(['a'], 4);
    await Promise.all(jobs.slice(0, 3).map((j, i) => b.ack(j, { processed: 1, failed: i === 0 ? 1 : 0 })));
    expect((await claimedBy(db!)).map((r) => r.id)).toEqual([jobs[3]!.id]);
    expect(await b.recover()).toEqual({ queues: ['a', 'empty-but-listed'], waiting: [], retries: [], counters: { processed: 3, failed: 1 } });
    await b.ack(jobs[3]!, { processed: 1, failed: 0 });
    await b.addCounters({ processed: 2, failed: 2 });
    expect(await claimedBy(db!)).toEqual([]);
    expect((await b.recover()).counters).toEqual({ processed: 6, failed: 3 });
  });

  it('a retry waits for run_at, then goes back to its queue once, even with two instances moving due retries at once', async () => {
    const [da, db] = await instances(2);
    const a = backend(da!);
    const b = backend(db!);
    await a.push(Array.from({ length: 30 }, (_, i) => job('r', i)));
    const taken = await a.fetch(['r'], 30);
    for (const j of taken) {
      await a.retryLater({ ...j, retry_count: 1, run_at: now() + 5000 + j.id, failed_at: now(), error: 'Error: boom' }, { processed: 1, failed: 1 });
    }
    const retries = await b.retries();
    expect(retries.map((j) => j.id)).toEqual(taken.map((j) => j.id));
    expect(retries[0]).toMatchObject({ retry_count: 1, error: 'Error: boom', failed_at: now() });
    // An error text with a NUL (PostgreSQL's text refuses it) is still written, or the job would stay claimed.
    const [nul] = await a.push([job('nul', 0)]);
    await a.fetch(['nul'], 1);
    await a.kill({ ...nul!, run_at: null, failed_at: now(), error: 'Error: bad name a\u0000b.txt' }, { processed: 0, failed: 0 }, 10);
    expect((await a.dead(1))[0]).toMatchObject({ id: nul!.id, error: 'Error: bad name a\uFFFDb.txt' });
    expect(await a.clearDead()).toBe(1);
    expect(await b.queueSize('r')).toBe(0);
    expect(await a.moveDue(now() + 4999)).toBe(0);
    clockMs += 60_000;
    const moved = await Promise.all([a.moveDue(now()), b.moveDue(now()), a.moveDue(now()), b.moveDue(now())]);
    expect(moved.reduce((x, y) => x + y, 0)).toBe(30);
    expect(await a.retries()).toEqual([]);
    const again = await b.fetch(['r'], 100);
    expect(again.map((j) => j.id).sort((x, y) => x - y)).toEqual(taken.map((j) => j.id));
    expect(again[0]).toMatchObject({ retry_count: 1, enqueued_at: now() });
    expect((await b.recover()).counters).toEqual({ processed: 30, failed: 30 });
  });

  it('the dead set: newest first, trimmed to keep; requeue, delete and clear act on their set only', async () => {
    const [db] = await instances(1);
    const b = backend(db!);
    await b.push([1, 2, 3, 4].map((n) => job('d', n)));
    const jobs = await b.fetch(['d'], 4);
    for (const j of jobs) {
      clockMs += 1000;
      await b.kill({ ...j, run_at: null, failed_at: now(), error: `Error: ${j.args.n}` }, { processed: 1, failed: 1 }, 3);
    }
    expect(await b.deadSize()).toBe(3);
    expect((await b.dead(10)).map((j) => j.args.n)).toEqual([4, 3, 2]);
    expect((await b.dead(1, 1)).map((j) => j.args.n)).toEqual([3]);
    expect((await b.deadByIds(undefined)).map((j) => j.args.n)).toEqual([2, 3, 4]);
    const [d2, d3, d4] = [jobs[1]!.id, jobs[2]!.id, jobs[3]!.id];
    expect((await b.deadByIds([d4, jobs[0]!.id, d2])).map((j) => j.id)).toEqual([d4, d2]);
    // Not in the retry set: nothing deleted from it.
    expect(await b.deleteFailed([d2, d3], 'retry')).toEqual([]);
    expect(await b.deleteFailed([d2, 999_999], 'dead')).toEqual([d2]);
    await b.requeue([d3], now());
    expect(await b.deadSize()).toBe(1);
    expect(ns(await b.fetch(['d'], 5))).toEqual([['d', 3]]);
    expect(await b.clearRetries()).toBe(0);
    expect(await b.clearDead()).toBe(1);
    expect(await b.deadSize()).toBe(0);
    // A dead job requeued into a queue deleted meanwhile lists the queue again (Redis SADDs it).
    const [g] = await b.push([job('gone', 9)]);
    await b.fetch(['gone'], 1);
    await b.kill({ ...g!, run_at: null, failed_at: now(), error: 'x' }, { processed: 1, failed: 1 }, 10);
    expect(await b.deleteQueues(['gone'])).toBe(0);
    expect(await b.servedQueues()).toEqual(['d']);
    await b.requeue([g!.id], now());
    expect(await b.servedQueues()).toEqual(['d', 'gone']);
    expect(await b.queueSize('gone')).toBe(1);
    const [r] = await b.fetch(['gone'], 1);
    await b.retryLater({ ...r!, retry_count: 1, run_at: now() + 1, failed_at: now(), error: 'x' }, { processed: 1, failed: 1 });
    expect(await b.clearDead()).toBe(0);
    expect(await b.clearRetries()).toBe(1);
  });

  it('pushUnlessWaiting: one waiting job per queue and kind, whichever instances push at once; a running one does not count', async () => {
    const [da, db] = await instances(2);
    const a = backend(da!);
    const b = backend(db!);
    const pushed = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).pushUnlessWaiting(job('tick', i))));
    expect(pushed.filter((j) => j !== null)).toHaveLength(1);
    expect(await a.queueSize('tick')).toBe(1);
    // Another kind in the queue, or the kind in another queue, is another job.
    expect(await a.pushUnlessWaiting({ ...job('tick', 20), kind: 'other' })).not.toBeNull();
    expect(await a.pushUnlessWaiting(job('tock', 21))).not.toBeNull();
    const taken = await b.fetch(['tick'], 5);
    expect(taken).toHaveLength(2);
    const again = await a.pushUnlessWaiting(job('tick', 22));
    expect(again).toMatchObject({ queue: 'tick', kind: 'synthetic', args: { n: 22 } });
    expect((await a.queuePage('tick', 0, 5))?.jobs.map((j) => j.id)).toEqual([again!.id]);
  });

  it('deleting a queue drops its waiting and retrying jobs; running and dead ones stay', async () => {
    const [db] = await instances(1);
    const b = backend(db!);
    await b.push([1, 2, 3, 4, 5].map((n) => job('del', n)));
    await b.push([job('keep', 6)]);
    const [running, retrying, dying] = await b.fetch(['del'], 3);
    await b.retryLater({ ...retrying!, retry_count: 1, run_at: now() + 1e6, failed_at: now(), error: 'x' }, { processed: 1, failed: 1 });
    await b.kill({ ...dying!, run_at: null, failed_at: now(), error: 'x' }, { processed: 1, failed: 1 }, 10);
    expect(await b.deleteSharedQueue('nope')).toBeUndefined();
    expect(await b.deleteSharedQueue('del')).toEqual({ dropped: 3 }); // two waiting, one retrying
    expect(await b.servedQueues()).toEqual(['keep']);
    expect(await b.queueInfo('del')).toBeNull();
    expect(await b.deadSize()).toBe(1);
    expect((await claimedBy(db!)).map((r) => r.id)).toContain(running!.id);
    await b.ack(running!, { processed: 1, failed: 0 });
    expect(await b.queueSize('keep')).toBe(1);
  });

  it('a process that stops beating has its jobs taken over once its heartbeat expires; a live one keeps its own', async () => {
    const [da, db] = await instances(2);
    const survivor = backend(da!, { ttlMs: 60_000, identity: 'survivor' });
    const victim = backend(db!, { ttlMs: 400, identity: 'victim' });
    await survivor.push([1, 2, 3].map((n) => job('w', n)));
    await beat(survivor, ['w']);
    const mine = await survivor.fetch(['w'], 1);
    const lost = await victim.fetch(['w'], 2);
    await beat(victim, ['w'], lost);
    await survivor.push([job('w', 4)]);
    expect(ns(lost)).toEqual([['w', 2], ['w', 3]]);
    // Both alive: nobody's claims are freed, whoever looks.
    expect(await survivor.recoverOrphans()).toBe(0);
    expect(await victim.recoverOrphans()).toBe(0);
    expect((await survivor.read()).processes()).toHaveLength(2);
    // The victim stops (a kill -9: no leave, no more beats); the survivor frees its claims after the TTL.
    const freed = await waitFor('the victim’s heartbeat expired and its jobs freed', async () => (await survivor.recoverOrphans()) || undefined, 10_000, 50);
    expect(freed).toBe(2);
    expect([...(await survivor.read()).processes()].map((p) => p.busy)).toEqual([0]);
    // They kept their place: older than job 4, they run next.
    expect(ns(await survivor.fetch(['w'], 10))).toEqual([['w', 2], ['w', 3], ['w', 4]]);
    expect((await claimedBy(da!)).every((r) => r.claimed_by === 'survivor')).toBe(true);
    expect(mine).toHaveLength(1);
    // The survivor's own claims are never taken by its own or another's recovery while it beats.
    const third = backend(db!, { identity: 'third' });
    expect(await third.recoverOrphans()).toBe(0);
    expect(await survivor.recoverOrphans()).toBe(0);
  });

  it('beats as Sidekiq (every 5 s, or TTL/3 when shorter) unless told, never less often than TTL/3', () => {
    // The constructor queries nothing: no database needed.
    const every = (o: { processTtlMs?: number; beatEveryMs?: number }) => new PgJobBackend({ pool: {} as Pool, now, ...o }).beatEveryMs;
    expect([every({}), every({ processTtlMs: 3000 }), every({ beatEveryMs: 100 }), every({ processTtlMs: 3000, beatEveryMs: 5000 })]).toEqual([5000, 1000, 100, 1000]);
  });

  it('a process that claims before its first beat is alive for its TTL, not an orphan', async () => {
    const [da, db] = await instances(2);
    const early = backend(da!, { identity: 'early' });
    const other = backend(db!, { identity: 'other' });
    await early.push([job('e', 1)]);
    expect(await early.fetch(['e'], 1)).toHaveLength(1);
    expect(await other.recoverOrphans()).toBe(0);
    expect((await claimedBy(da!))[0]!.claimed_by).toBe('early');
  });

  it('leave() puts this process’s jobs back at once and removes its heartbeat, for good', async () => {
    const [da, db] = await instances(2);
    const a = backend(da!);
    const b = backend(db!);
    await a.push([1, 2].map((n) => job('l', n)));
    await beat(a, ['l']);
    await beat(b, ['l']);
    await a.fetch(['l'], 2);
    expect(await b.queueSize('l')).toBe(0);
    // A beat still being written when the stop begins, and one asked for after it, leave no heartbeat behind.
    const inFlight = beat(a, ['l']);
    await a.leave();
    await inFlight;
    await beat(a, ['l']);
    expect(await a.fetch(['l'], 2)).toEqual([]);
    expect(await b.queueSize('l')).toBe(2);
    expect([...(await b.read()).processes()]).toHaveLength(1);
    expect(ns(await b.fetch(['l'], 2))).toEqual([['l', 1], ['l', 2]]);
  });

  it('views: queues in byte order with sizes, oldest job and other processes; a page in fetch order; one read for the metrics', async () => {
    const [da, db] = await instances(2);
    const a = backend(da!);
    const b = backend(db!);
    await a.push([job('b-queue', 1, now() - 5000), job('b-queue', 2), job('B-upper', 3), job('a-queue', 4, now() - 2000)]);
    await a.addQueue('z-empty', now());
    await a.push([job('a-queue', 5, now() - 9000)]);
    await beat(a, ['a-queue', 'b-queue']);
    const running = await b.fetch(['b-queue'], 1); // job 1: running, no longer waiting
    await beat(b, ['b-queue', 'B-upper'], running);
    await a.ack((await a.fetch(['B-upper'], 1))[0]!, { processed: 1, failed: 0 });

    const list = await a.queueList();
    expect(list.total).toBe(4);
    expect(list.queues).toEqual([
      { name: 'B-upper', size: 0, oldestEnqueuedAt: null, otherProcesses: 1, createdByJobscope: true },
      { name: 'a-queue', size: 2, oldestEnqueuedAt: now() - 9000, otherProcesses: 0, createdByJobscope: true },
      { name: 'b-queue', size: 1, oldestEnqueuedAt: now(), otherProcesses: 1, createdByJobscope: true },
      { name: 'z-empty', size: 0, oldestEnqueuedAt: null, otherProcesses: 0, createdByJobscope: true },
    ]);
    expect(await b.queueInfo('a-queue')).toEqual({ name: 'a-queue', size: 2, oldestEnqueuedAt: now() - 9000, otherProcesses: 1, createdByJobscope: true });
    expect(await a.queueInfo('nope')).toBeNull();
    expect(await a.queuePage('nope', 0, 10)).toBeNull();
    const page = await a.queuePage('a-queue', 0, 10);
    expect(page?.total).toBe(2);
    expect(page?.jobs.map((j) => j.args.n)).toEqual([5, 4]);
    expect((await a.queuePage('a-queue', 1, 10))?.jobs.map((j) => j.args.n)).toEqual([4]);
    expect(await a.queuePage('z-empty', 0, 10)).toEqual({ total: 0, jobs: [] });
    const capped = new PgJobBackend({ pool: da!.pool, now, maxQueuesRead: 2 });
    expect((await capped.queueList()).queues.map((q) => q.name)).toEqual(['B-upper', 'a-queue']);
    expect((await capped.queueList()).total).toBe(4);

    const view = await b.read();
    expect([...view.queues()].map((q) => [q.name, q.backlog, q.latency(now() + 3500)])).toEqual([
      ['B-upper', 0, 0],
      ['a-queue', 2, 12],
      ['b-queue', 1, 3],
      ['z-empty', 0, 0],
    ]);
    const procs = [...view.processes()];
    expect(procs.map((p) => [p.busy, p.concurrency, p.identity, p.queueNames()])).toEqual(
      expect.arrayContaining([
        [0, 5, { hostname: 'h', pid: 1, tag: 't', labels: ['x'] }, ['a-queue', 'b-queue']],
        [1, 5, { hostname: 'h', pid: 1, tag: 't', labels: ['x'] }, ['b-queue', 'B-upper']],
      ]),
    );
    expect(procs).toHaveLength(2);
    expect(view.counters()).toEqual({ processed: 1, failed: 0 });
  });
});
