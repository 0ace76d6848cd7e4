// The embedded job system: named queues, worker pools, Sidekiq's counters, retries with backoff and
// a dead set. Durable queues keep every job as a row until it finishes (one insert when enqueued,
// one delete plus the counter update in one transaction when done), and mirror the waiting jobs in
// memory, so reading metrics never queries the store. Memory queues serve the demo load, whose jobs
// need no durability and would otherwise cost two writes each.
import os from 'node:os';
import { setMaxListeners } from 'node:events';
import type { Config } from '../config.ts';
import type { Store } from '../store/index.ts';
import { JobQueue } from './queue.ts';
import { JobRows, type FailedJob } from './job-rows.ts';
import { WorkerPool, type PoolIdentity } from './worker-pool.ts';
import { retryDelay } from './retry.ts';
import { DemoLoad } from './demo-load.ts';
import type { EnqueueOptions, Job, JobKind } from './types.ts';

export class QueueKindError extends Error {}
/** Creating the queue would pass --max-queues. */
export class QueueLimitError extends Error {}

type Log = { warn(obj: unknown, msg?: string): void };

export class JobSystem {
  readonly rows: JobRows;
  private readonly kinds = new Map<string, JobKind>();
  private readonly queueMap = new Map<string, JobQueue>();
  private readonly servedBy = new Map<string, Set<WorkerPool>>();
  private readonly pools: WorkerPool[] = [];
  /** The server's own pool: serves every durable queue. */
  readonly pool: WorkerPool;
  /** Retry set mirror, soonest first. */
  private retrySet: FailedJob[] = [];
  private readonly waitingByKind = new Map<string, number>();
  /** Jobs being worked on, by queue: a queue with one running is not idle. */
  private readonly runningByQueue = new Map<string, number>();
  private memoryQueues = 0;
  private processed = 0;
  private failed = 0;
  private unsavedProcessed = 0;
  private unsavedFailed = 0;
  private nextMemoryId = -1;
  private deadCount = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly timers: NodeJS.Timeout[] = [];
  private started = false;
  private stopping = false;
  private closed = false;

  /** Set to the server's logger once it exists. */
  log: Log = console;
  readonly demo: DemoLoad;

  constructor(
    private readonly config: Config,
    private readonly store: Store,
  ) {
    this.demo = new DemoLoad(this);
    // Every running job listens for the stop; thousands may run at once under the demo load.
    setMaxListeners(0, this.abort.signal);
    this.rows = new JobRows(store.db);
    this.pool = this.addPool({ hostname: os.hostname(), pid: process.pid, tag: 'jobscope', labels: [], concurrency: Math.max(1, config.jobConcurrency) });
  }

  register(kind: string, def: JobKind): void {
    this.kinds.set(kind, def);
  }

  /** Loads queues, waiting jobs (also those cut off by a crash), retries and counters; starts working. */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const name of this.rows.queueNames()) this.durableQueue(name, false);
    for (const def of this.kinds.values()) if (def.declare !== false) this.durableQueue(def.queue, true);
    const counters = this.rows.counters();
    this.processed = counters.processed;
    this.failed = counters.failed;
    for (const job of this.rows.waiting()) this.pushWaiting(this.durableQueue(job.queue, true), job);
    this.retrySet = this.rows.retries();
    this.deadCount = this.rows.countByState().dead ?? 0;
    this.every(Math.max(10, this.config.jobPollMs), () => this.moveDueRetries());
    // Demo jobs only bump counters in memory; save those now and then (durable jobs save their own).
    this.every(1000, () => this.saveCounters());
    const idleMs = this.config.queueForgetIdleMinutes * 60_000;
    if (idleMs > 0) this.every(Math.min(60_000, idleMs / 2), () => void this.forgetIdleQueues());
    for (const p of this.pools) p.wake();
  }

  /** Runs fn every `ms` (not keeping the process alive); stopped with the job system. */
  every(ms: number, fn: () => void): void {
    const t = setInterval(() => {
      if (this.stopping) return;
      try {
        fn();
      } catch (err) {
        this.log.warn({ err }, 'job system timer failed');
      }
    }, ms);
    t.unref();
    this.timers.push(t);
  }

  // ---- queues and pools -------------------------------------------------------------------

  queues(): IterableIterator<JobQueue> {
    return this.queueMap.values();
  }

  queue(name: string): JobQueue | undefined {
    return this.queueMap.get(name);
  }

  processes(): readonly WorkerPool[] {
    return this.pools;
  }

  counters(): { processed: number; failed: number } {
    return { processed: this.processed, failed: this.failed };
  }

  /** The durable queue of that name, created (and remembered in the store) when new. */
  durableQueue(name: string, persist = true): JobQueue {
    let q = this.queueMap.get(name);
    if (q) {
      if (!q.durable) throw new QueueKindError(`queue "${name}" belongs to the demo load generator; pick another queue name`);
      return q;
    }
    q = new JobQueue(name, true);
    this.queueMap.set(name, q);
    if (persist) this.rows.addQueue(name, Date.now());
    this.attach(this.pool, q);
    return q;
  }

  /** A memory-backed queue (the demo's). Returns undefined when a durable queue has that name. */
  memoryQueue(name: string): JobQueue | undefined {
    const q = this.queueMap.get(name);
    if (q) return q.durable ? undefined : q;
    const created = new JobQueue(name, false);
    this.queueMap.set(name, created);
    this.memoryQueues++;
    return created;
  }

  /** Drops a memory queue and its waiting jobs (stopping the demo). */
  removeMemoryQueue(name: string): void {
    const q = this.queueMap.get(name);
    if (!q || q.durable) return;
    q.drain();
    this.memoryQueues--;
    this.detach(q);
  }

  /** A queue of one of Jobscope's own job kinds (declared at start): never deleted nor forgotten. */
  isBuiltin(name: string): boolean {
    for (const def of this.kinds.values()) if (def.declare !== false && def.queue === name) return true;
    return false;
  }

  /**
   * Deletes a durable queue of synthetic jobs: its waiting and retrying jobs are dropped (a job in
   * flight finishes, counted, but is not retried), its dead jobs stay in the dead set. Undefined
   * when there is no such queue.
   */
  deleteQueue(name: string): { dropped: number } | undefined {
    const q = this.queueMap.get(name);
    if (!q) return undefined;
    if (!q.durable) throw new QueueKindError(`queue "${name}" belongs to the demo load generator; stop the demo load (DELETE /api/v3/sim/load) to remove it`);
    if (this.isBuiltin(name)) throw new QueueKindError(`queue "${name}" is a built-in queue of Jobscope's own jobs and cannot be deleted`);
    for (const job of q.drain()) this.waitingByKind.set(job.kind, (this.waitingByKind.get(job.kind) ?? 1) - 1);
    this.retrySet = this.retrySet.filter((j) => j.queue !== name);
    const dropped = this.store.db.tx(() => this.rows.removeQueue(name));
    this.detach(q);
    return { dropped };
  }

  /**
   * Forgets durable non-built-in queues that are empty, have nothing running or waiting to retry,
   * and saw no push or take for --queue-forget-idle-minutes; returns their names. Using the name
   * again creates the queue again.
   */
  forgetIdleQueues(now = Date.now()): string[] {
    const idleMs = this.config.queueForgetIdleMinutes * 60_000;
    if (idleMs <= 0) return [];
    const retrying = new Set(this.retrySet.map((j) => j.queue));
    const idle = [...this.queueMap.values()].filter(
      (q) => q.durable && q.backlog === 0 && now - q.lastActiveAt >= idleMs && !(this.runningByQueue.get(q.name) ?? 0) && !retrying.has(q.name) && !this.isBuiltin(q.name),
    );
    if (idle.length === 0) return [];
    this.store.db.tx(() => {
      for (const q of idle) this.rows.removeQueue(q.name);
    });
    for (const q of idle) this.detach(q);
    return idle.map((q) => q.name);
  }

  private detach(q: JobQueue): void {
    for (const p of this.servedBy.get(q.name) ?? []) p.unserve(q);
    this.servedBy.delete(q.name);
    this.queueMap.delete(q.name);
  }

  addPool(identity: PoolIdentity, queues: JobQueue[] = []): WorkerPool {
    const pool = new WorkerPool(identity, (job) => this.track(this.runJob(job)));
    this.pools.push(pool);
    for (const q of queues) this.attach(pool, q);
    if (this.started) pool.wake();
    return pool;
  }

  /** Takes a pool out of the process list; its running jobs finish, it takes no new ones. */
  removePool(pool: WorkerPool): void {
    if (pool === this.pool) return;
    pool.stop();
    const i = this.pools.indexOf(pool);
    if (i >= 0) this.pools.splice(i, 1);
    for (const name of pool.queueNames()) this.servedBy.get(name)?.delete(pool);
  }

  private attach(pool: WorkerPool, q: JobQueue): void {
    pool.serve(q);
    let set = this.servedBy.get(q.name);
    if (!set) this.servedBy.set(q.name, (set = new Set()));
    set.add(pool);
  }

  private wake(queue: string): void {
    if (!this.started || this.stopping) return;
    for (const p of this.servedBy.get(queue) ?? []) {
      p.wake();
      if (this.queueMap.get(queue)!.backlog === 0) return;
    }
  }

  // ---- enqueueing ---------------------------------------------------------------------------

  /** Enqueues `count` durable jobs of a registered kind in one transaction; returns them. */
  enqueue(kindName: string, args: Record<string, unknown>, opts: EnqueueOptions = {}): Job[] {
    const kind = this.kinds.get(kindName);
    if (!kind) throw new Error(`unknown job kind ${kindName}`);
    const name = opts.queue ?? kind.queue;
    // Each queue costs memory, a row and a place in every metrics answer: their number is bounded.
    if (!this.queueMap.has(name) && this.queueMap.size - this.memoryQueues >= this.config.maxQueues) {
      throw new QueueLimitError(
        `${this.config.maxQueues} queues exist, the most allowed (--max-queues): delete one (DELETE /api/v3/sim/jobs/queues/:name) or use an existing queue`,
      );
    }
    const queue = this.durableQueue(name);
    const now = Date.now();
    const count = Math.max(1, opts.count ?? 1);
    const jobs = this.store.db.tx(() => {
      const out: Job[] = [];
      for (let i = 0; i < count; i++) {
        const job: Omit<Job, 'id'> = {
          queue: queue.name,
          class: opts.class ?? kind.class,
          kind: kindName,
          args,
          retry: opts.retry ?? kind.retry,
          retry_count: 0,
          created_at: now,
          enqueued_at: now,
        };
        out.push({ ...job, id: this.rows.insert(job) });
      }
      return out;
    });
    for (const job of jobs) this.pushWaiting(queue, job);
    this.wake(queue.name);
    return jobs;
  }

  /** Enqueues the job unless one of that kind is already waiting (periodic work must not pile up). */
  enqueueOnce(kindName: string, args: Record<string, unknown> = {}): boolean {
    if ((this.waitingByKind.get(kindName) ?? 0) > 0) return false;
    this.enqueue(kindName, args);
    return true;
  }

  /** Pushes a memory-only job (demo load) into a memory queue. */
  enqueueMemory(queue: JobQueue, kindName: string, cls: string, args: Record<string, unknown>): void {
    const now = Date.now();
    queue.push({ id: this.nextMemoryId--, queue: queue.name, class: cls, kind: kindName, args, retry: false, retry_count: 0, created_at: now, enqueued_at: now });
    this.wake(queue.name);
  }

  private pushWaiting(queue: JobQueue, job: Job): void {
    queue.push(job);
    this.waitingByKind.set(job.kind, (this.waitingByKind.get(job.kind) ?? 0) + 1);
  }

  // ---- running ------------------------------------------------------------------------------

  private track(p: Promise<void>): Promise<void> {
    this.inFlight.add(p);
    return p.finally(() => this.inFlight.delete(p));
  }

  private async runJob(job: Job): Promise<void> {
    if (job.id > 0) this.waitingByKind.set(job.kind, (this.waitingByKind.get(job.kind) ?? 1) - 1);
    this.runningByQueue.set(job.queue, (this.runningByQueue.get(job.queue) ?? 0) + 1);
    let error: unknown;
    try {
      const kind = this.kinds.get(job.kind);
      if (!kind) throw new Error(`no performer for job kind "${job.kind}"`);
      await kind.perform(job.args, { signal: this.abort.signal });
    } catch (err) {
      error = err ?? new Error('job failed');
    } finally {
      const n = (this.runningByQueue.get(job.queue) ?? 1) - 1;
      if (n > 0) this.runningByQueue.set(job.queue, n);
      else this.runningByQueue.delete(job.queue);
    }
    // Cut off by shutdown: leave the row queued, it runs again at the next start.
    if (this.closed || (this.stopping && error !== undefined)) return;
    try {
      this.record(job, error);
    } catch (err) {
      this.log.warn({ err, job: job.id }, 'could not record the end of a job; it will run again after a restart');
    }
  }

  /** Counts the run (Sidekiq counts failed runs as processed too) and retires, retries or buries the job. */
  private record(job: Job, error: unknown): void {
    this.processed++;
    this.unsavedProcessed++;
    if (error !== undefined) {
      this.failed++;
      this.unsavedFailed++;
    }
    if (job.id < 0) return; // memory job: counters only, saved by the timer
    const now = Date.now();
    this.store.db.tx(() => {
      // A queue deleted while this job ran takes no retry of it (it would come back to life).
      if (error === undefined || job.retry === false || !this.queueMap.has(job.queue)) this.rows.remove(job.id);
      else {
        const message = errorText(error);
        if (job.retry_count < job.retry) {
          const runAt = now + retryDelay(job.retry_count, this.config.jobBackoffUnitMs);
          this.rows.toRetry(job.id, job.retry_count + 1, runAt, now, message);
          this.insertRetry({ ...job, retry_count: job.retry_count + 1, run_at: runAt, failed_at: now, error: message });
        } else {
          this.rows.toDead(job.id, job.retry_count, now, message);
          // Trimming sorts the dead set: only done once it is over its bound, not on every death.
          if (++this.deadCount > this.config.jobDeadMax) this.deadCount -= this.rows.trimDead(this.config.jobDeadMax);
        }
      }
      this.saveCounters();
    });
  }

  private insertRetry(job: FailedJob): void {
    let i = this.retrySet.length;
    while (i > 0 && (this.retrySet[i - 1]!.run_at ?? 0) > (job.run_at ?? 0)) i--;
    this.retrySet.splice(i, 0, job);
  }

  retries(): readonly FailedJob[] {
    return this.retrySet;
  }

  private moveDueRetries(): void {
    const now = Date.now();
    let n = 0;
    while (n < this.retrySet.length && (this.retrySet[n]!.run_at ?? 0) <= now) n++;
    if (n === 0) return;
    const due = this.retrySet.splice(0, n);
    this.store.db.tx(() => {
      for (const job of due) this.rows.requeue(job.id, now);
    });
    const touched = new Set<string>();
    for (const job of due) {
      this.pushWaiting(this.durableQueue(job.queue), { ...job, enqueued_at: now });
      touched.add(job.queue);
    }
    for (const q of touched) this.wake(q);
  }

  /** Empties the dead set; returns how many jobs it held. */
  clearDead(): number {
    const n = this.store.db.tx(() => this.rows.clearDead());
    this.deadCount = 0;
    return n;
  }

  /** Moves dead jobs (all, or the given ids) back into their queues; returns how many. */
  retryDead(ids?: number[]): number {
    const dead = this.rows.deadByIds(ids);
    this.deadCount -= dead.length;
    const now = Date.now();
    this.store.db.tx(() => {
      for (const job of dead) this.rows.requeue(job.id, now);
    });
    for (const job of dead) {
      this.pushWaiting(this.durableQueue(job.queue), { ...job, retry_count: job.retry_count, enqueued_at: now });
      this.wake(job.queue);
    }
    return dead.length;
  }

  private saveCounters(): void {
    if (this.closed || (this.unsavedProcessed === 0 && this.unsavedFailed === 0)) return;
    const p = this.unsavedProcessed;
    const f = this.unsavedFailed;
    this.store.db.tx(() => this.rows.addCounters(p, f));
    this.unsavedProcessed -= p;
    this.unsavedFailed -= f;
  }

  /** Stops taking jobs, asks running ones to give up, waits a little for them, saves the counters. */
  async stop(graceMs = 3000): Promise<void> {
    if (this.stopping) return;
    this.demo.stop();
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    for (const p of this.pools) p.stop();
    this.abort.abort();
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    }
    try {
      this.saveCounters();
    } finally {
      this.closed = true;
    }
  }
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.slice(0, 2000);
}
