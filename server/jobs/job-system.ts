// The embedded job system: named queues served by worker pools, Sidekiq's counters, retries with
// backoff and a dead set. Durable queues keep every job in the backend until it ends (one push when
// enqueued, one ack, retry or kill when done) and mirror the waiting jobs in memory, so reading
// metrics never queries the backend. Memory queues serve the demo load, whose jobs need no
// durability and would otherwise cost two writes each. The parts live in their own modules: kinds
// (registry.ts), queues and pools (topology.ts), running a job and recording its end
// (job-runner.ts), the retry set (retry-set.ts), the counters (counters.ts) and storage (backend.ts).
import os from 'node:os';
import type { Config } from '../config.ts';
import type { Service } from '../lifecycle.ts';
import { systemClock, type Cancel, type Clock } from '../clock.ts';
import type { MetricsSource, MetricsView } from '../metrics-api/source.ts';
import { after, type Awaitable, type JobBackend, type NewJob, type RecoveredJobs } from './backend.ts';
import { retryDelay } from './retry.ts';
import { KindRegistry } from './registry.ts';
import { Topology } from './topology.ts';
import { RetrySet } from './retry-set.ts';
import { Counters } from './counters.ts';
import type { JobQueue } from './queue.ts';
import type { PoolIdentity, WorkerPool } from './worker-pool.ts';
import { JobRunner } from './job-runner.ts';
import type { EnqueueOptions, FailedJob, Job, JobCounters, JobKind } from './types.ts';

export class QueueKindError extends Error {}

/** What a retry or delete by ids did: how many jobs it moved, and the ids not in the set (already gone). */
export interface Acted {
  count: number;
  missing: number[];
}

function acted(ids: number[] | undefined, done: Job[]): Acted {
  const hit = new Set(done.map((j) => j.id));
  return { count: done.length, missing: ids ? [...new Set(ids)].filter((id) => !hit.has(id)) : [] };
}
/** Creating the queue would pass --max-queues. */
export class QueueLimitError extends Error {}

type Log = { warn(obj: unknown, msg?: string): void };

export class JobSystem implements Service, MetricsSource, MetricsView {
  readonly name = 'jobs';
  readonly clock: Clock;
  private readonly kinds = new KindRegistry();
  private readonly topology: Topology;
  private readonly retrySet = new RetrySet();
  private readonly counts = new Counters();
  /** The server's own pool: serves every durable queue. */
  readonly pool: WorkerPool;
  private readonly waitingByKind = new Map<string, number>();
  private readonly runner: JobRunner;
  /** Memory jobs are never stored, so their ids come from here. */
  private nextMemoryId = 1;
  private readonly timers: Cancel[] = [];
  private started = false;
  private stopping = false;

  /** Set to the server's logger once it exists. */
  log: Log = console;

  constructor(
    private readonly config: Config,
    private readonly backend: JobBackend,
    opts: { clock?: Clock } = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.runner = new JobRunner({
      kinds: this.kinds,
      backend,
      retrySet: this.retrySet,
      counts: this.counts,
      clock: this.clock,
      config,
      hasQueue: (name) => this.topology.queue(name) !== undefined,
      taken: (job) => this.waitingByKind.set(job.kind, (this.waitingByKind.get(job.kind) ?? 1) - 1),
      log: () => this.log,
      retryDelay,
      shared: false,
    });
    this.topology = new Topology(() => this.clock.now(), (job, from) => this.runner.run(job, from));
    this.pool = this.topology.addPool({ hostname: os.hostname(), pid: process.pid, tag: 'jobscope', labels: [], concurrency: Math.max(1, config.jobConcurrency) });
  }

  register(kind: string, def: JobKind): void {
    this.kinds.register(kind, def);
  }

  /** Loads queues, waiting jobs (also those cut off by a crash), retries and counters; starts working. */
  start(): void | Promise<void> {
    if (this.started) return;
    this.started = true;
    return after(this.backend.recover(), (kept) => this.begin(kept));
  }

  private begin(kept: RecoveredJobs): void {
    for (const name of kept.queues) this.durableQueue(name, false);
    for (const name of this.kinds.declaredQueues()) this.durableQueue(name, true);
    this.counts.load(kept.counters);
    for (const job of kept.waiting) this.pushWaiting(this.durableQueue(job.queue, true), job);
    this.retrySet.load(kept.retries);
    this.every(Math.max(10, this.config.jobPollMs), () => this.moveDueRetries());
    // Memory jobs only bump counters in memory; save those now and then (durable jobs save their own).
    this.every(1000, () => this.quietly(this.saveCounters(), 'could not save the job counters'));
    const idleMs = this.config.queueForgetIdleMinutes * 60_000;
    if (idleMs > 0) this.every(Math.min(60_000, idleMs / 2), () => void this.forgetIdleQueues());
    this.topology.wakeAll();
  }

  /** Runs fn every `ms` on the job system's clock (not keeping the process alive); stopped with it. */
  every(ms: number, fn: () => void): void {
    this.timers.push(
      this.clock.every(ms, () => {
        if (this.stopping) return;
        try {
          fn();
        } catch (err) {
          this.log.warn({ err }, 'job system timer failed');
        }
      }),
    );
  }

  // ---- what the metrics read -----------------------------------------------------------------

  now(): number {
    return this.clock.now();
  }

  /** In memory, so always up to date: the view is the job system itself. */
  read(): MetricsView {
    return this;
  }

  queues(): IterableIterator<JobQueue> {
    return this.topology.queues();
  }

  queue(name: string): JobQueue | undefined {
    return this.topology.queue(name);
  }

  processes(): readonly WorkerPool[] {
    return this.topology.processes();
  }

  counters(): JobCounters {
    return this.counts.totals();
  }

  // ---- queues and pools ----------------------------------------------------------------------

  /** The durable queue of that name, created (and remembered in the backend) when new. */
  durableQueue(name: string, persist = true): JobQueue {
    const q = this.topology.queue(name);
    if (q) {
      if (!q.durable) throw new QueueKindError(`queue "${name}" belongs to the demo load generator; pick another queue name`);
      return q;
    }
    const created = this.topology.create(name, true);
    if (persist) this.quietly(this.backend.addQueue(name, this.clock.now()), 'could not remember a queue');
    this.topology.attach(this.pool, created);
    return created;
  }

  /** A memory-backed queue (the demo's). Returns undefined when a durable queue has that name. */
  memoryQueue(name: string): JobQueue | undefined {
    const q = this.topology.queue(name);
    if (q) return q.durable ? undefined : q;
    return this.topology.create(name, false);
  }

  /** Drops a memory queue and its waiting jobs (stopping the demo). */
  removeMemoryQueue(name: string): void {
    const q = this.topology.queue(name);
    if (q && !q.durable) this.topology.remove(q);
  }

  /** A queue of one of Jobscope's own job kinds (declared at start): never deleted nor forgotten. */
  isBuiltin(name: string): boolean {
    return this.kinds.isBuiltinQueue(name);
  }

  /**
   * Deletes a durable queue of synthetic jobs: its waiting and retrying jobs are dropped (a job in
   * flight finishes, counted, but is not retried), its dead jobs stay in the dead set. Undefined
   * when there is no such queue.
   */
  deleteQueue(name: string): Awaitable<{ dropped: number } | undefined> {
    const q = this.topology.queue(name);
    if (!q) return undefined;
    if (!q.durable) throw new QueueKindError(`queue "${name}" belongs to the demo load generator; stop the demo load (DELETE /api/v3/sim/load) to remove it`);
    if (this.isBuiltin(name)) throw new QueueKindError(`queue "${name}" is a built-in queue of Jobscope's own jobs and cannot be deleted`);
    this.retrySet.dropQueue(name);
    return after(this.backend.deleteQueues([name]), (dropped) => {
      for (const job of this.topology.remove(q)) this.waitingByKind.set(job.kind, (this.waitingByKind.get(job.kind) ?? 1) - 1);
      return { dropped };
    });
  }

  /**
   * Forgets durable non-built-in queues that are empty, have nothing running or waiting to retry,
   * and saw no push or take for --queue-forget-idle-minutes; returns their names. Using the name
   * again creates the queue again.
   */
  forgetIdleQueues(now = this.clock.now()): string[] {
    const idleMs = this.config.queueForgetIdleMinutes * 60_000;
    if (idleMs <= 0) return [];
    const retrying = this.retrySet.queueNames();
    const idle = [...this.topology.queues()].filter(
      (q) => q.durable && q.backlog === 0 && now - q.lastActiveAt >= idleMs && !this.runner.isRunning(q.name) && !retrying.has(q.name) && !this.isBuiltin(q.name),
    );
    if (idle.length === 0) return [];
    this.quietly(
      this.backend.deleteQueues(idle.map((q) => q.name)),
      'could not forget idle queues',
    );
    for (const q of idle) this.topology.remove(q);
    return idle.map((q) => q.name);
  }

  addPool(identity: PoolIdentity, queues: JobQueue[] = []): WorkerPool {
    const pool = this.topology.addPool(identity, queues);
    if (this.started) pool.wake();
    return pool;
  }

  /** Takes a pool out of the process list; its running jobs finish, it takes no new ones. */
  removePool(pool: WorkerPool): void {
    if (pool !== this.pool) this.topology.removePool(pool);
  }

  private wake(queue: string): void {
    if (this.started && !this.stopping) this.topology.wake(queue);
  }

  // ---- enqueueing ----------------------------------------------------------------------------

  /** Enqueues `count` durable jobs of a registered kind in one backend step; returns them. */
  enqueue(kindName: string, args: Record<string, unknown>, opts: EnqueueOptions = {}): Awaitable<Job[]> {
    const kind = this.kinds.get(kindName);
    if (!kind) throw new Error(`unknown job kind ${kindName}`);
    const name = opts.queue ?? kind.queue;
    // Each queue costs memory, a row and a place in every metrics answer: their number is bounded.
    if (!this.topology.queue(name) && this.topology.durableCount >= this.config.maxQueues) {
      throw new QueueLimitError(
        `${this.config.maxQueues} queues exist, the most allowed (--max-queues): delete one (DELETE /api/v3/sim/jobs/queues/:name) or use an existing queue`,
      );
    }
    const queue = this.durableQueue(name);
    const now = this.clock.now();
    const count = Math.max(1, opts.count ?? 1);
    const job: NewJob = {
      queue: queue.name,
      class: opts.class ?? kind.class,
      kind: kindName,
      args,
      retry: opts.retry ?? kind.retry,
      retry_count: 0,
      created_at: now,
      enqueued_at: now,
    };
    return after(this.backend.push(Array.from({ length: count }, () => ({ ...job }))), (jobs) => {
      for (const j of jobs) this.pushWaiting(queue, j);
      this.wake(queue.name);
      return jobs;
    });
  }

  /** Kinds whose enqueueOnce is being written (an asynchronous backend): not enqueued twice meanwhile. */
  private readonly enqueuingOnce = new Set<string>();

  /** Enqueues the job unless one of that kind is already waiting (periodic work must not pile up). */
  enqueueOnce(kindName: string, args: Record<string, unknown> = {}): Awaitable<boolean> {
    if ((this.waitingByKind.get(kindName) ?? 0) > 0 || this.enqueuingOnce.has(kindName)) return false;
    const pushed = this.enqueue(kindName, args);
    if (!(pushed instanceof Promise)) return true;
    this.enqueuingOnce.add(kindName);
    return pushed.then(
      () => true,
      (err: unknown) => {
        this.log.warn({ err, kind: kindName }, 'could not enqueue a periodic job');
        return false;
      },
    ).finally(() => this.enqueuingOnce.delete(kindName));
  }

  /** Logs the failure of a write whose answer nobody waits for (an asynchronous backend's). */
  private quietly(v: Awaitable<unknown>, what: string): void {
    if (v instanceof Promise) v.catch((err: unknown) => this.log.warn({ err }, what));
  }

  /** Pushes a memory-only job (demo load) into a memory queue. */
  enqueueMemory(queue: JobQueue, kindName: string, cls: string, args: Record<string, unknown>): void {
    const now = this.clock.now();
    queue.push({ id: this.nextMemoryId++, queue: queue.name, class: cls, kind: kindName, args, retry: false, retry_count: 0, created_at: now, enqueued_at: now });
    this.wake(queue.name);
  }

  private pushWaiting(queue: JobQueue, job: Job): void {
    queue.push(job);
    this.waitingByKind.set(job.kind, (this.waitingByKind.get(job.kind) ?? 0) + 1);
  }

  // ---- the retry and dead sets ----------------------------------------------------------------

  retries(): readonly FailedJob[] {
    return this.retrySet.list();
  }

  /** The dead set, newest first. */
  dead(limit: number, offset = 0): Awaitable<FailedJob[]> {
    return this.backend.dead(limit, offset);
  }

  deadSize(): Awaitable<number> {
    return this.backend.deadSize();
  }

  /**
   * Moves jobs of the retry set (all, or the given ids) back into their queues now, as the poll
   * does when they are due; their retry count stays. Returns the ids moved and those not in the set.
   */
  retryNow(ids?: number[]): Awaitable<Acted> {
    const due = ids ? this.retrySet.take(new Set(ids)) : this.retrySet.clear();
    return after(this.requeueFailed(due), () => acted(ids, due));
  }

  /** Deletes jobs from the retry set (Sidekiq Web's Delete): they never run again. */
  deleteRetries(ids: number[]): Awaitable<Acted> {
    const gone = this.retrySet.take(new Set(ids));
    return after(this.backend.deleteFailed(gone.map((j) => j.id), 'retry'), () => acted(ids, gone));
  }

  /** Empties the retry set; returns how many jobs it held. */
  clearRetries(): Awaitable<number> {
    this.retrySet.clear();
    return this.backend.clearRetries();
  }

  /** Deletes jobs from the dead set by id. */
  deleteDead(ids: number[]): Awaitable<Acted> {
    const unique = [...new Set(ids)];
    return after(this.backend.deleteFailed(unique, 'dead'), (done) => {
      const gone = new Set(done);
      return { count: gone.size, missing: unique.filter((id) => !gone.has(id)) };
    });
  }

  private requeueFailed(jobs: FailedJob[]): Awaitable<void> {
    if (jobs.length === 0) return;
    const now = this.clock.now();
    return after(
      this.backend.requeue(
        jobs.map((j) => j.id),
        now,
      ),
      () => {
        const touched = new Set<string>();
        for (const job of jobs) {
          this.pushWaiting(this.durableQueue(job.queue), { ...job, enqueued_at: now });
          touched.add(job.queue);
        }
        for (const q of touched) this.wake(q);
      },
    );
  }

  private moveDueRetries(): void {
    this.quietly(this.requeueFailed(this.retrySet.takeDue(this.clock.now())), 'could not move due retries back');
  }

  /** Empties the dead set; returns how many jobs it held. */
  clearDead(): Awaitable<number> {
    return this.backend.clearDead();
  }

  /** Moves dead jobs (all, or the given ids) back into their queues; returns how many. */
  retryDead(ids?: number[]): Awaitable<number> {
    return after(this.backend.deadByIds(ids), (dead) => {
      const now = this.clock.now();
      return after(
        this.backend.requeue(
          dead.map((j) => j.id),
          now,
        ),
        () => {
          for (const job of dead) {
            this.pushWaiting(this.durableQueue(job.queue), { ...job, retry_count: job.retry_count, enqueued_at: now });
            this.wake(job.queue);
          }
          return dead.length;
        },
      );
    });
  }

  /** Saves the counters of memory jobs; marked saved before the write, unsaved again if it fails. */
  private saveCounters(): Awaitable<void> {
    if (this.runner.closed || !this.counts.hasUnsaved()) return;
    const counters = this.counts.unsaved();
    this.counts.saved(counters);
    try {
      const written = this.backend.addCounters(counters);
      if (written instanceof Promise) {
        return written.catch((err: unknown) => {
          this.counts.unsave(counters);
          throw err;
        });
      }
    } catch (err) {
      this.counts.unsave(counters);
      throw err;
    }
  }

  /** Stops taking jobs, asks running ones to give up, waits a little for them, saves the counters. */
  async stop(graceMs = 3000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const cancel of this.timers) cancel();
    this.topology.stopAll();
    await this.runner.stop(graceMs);
    try {
      await this.saveCounters();
    } finally {
      this.runner.closed = true;
    }
  }
}
