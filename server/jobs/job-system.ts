// The embedded job system: named queues served by worker pools, Sidekiq's counters, retries with
// backoff and a dead set, written once for every backend. What differs between backends (how work
// is taken, where waiting jobs and retries are read, what the stop gives back, the heartbeat) is its
// dispatch strategy (dispatch.ts), chosen here from the backend: a mirror in memory for a backend
// this process has to itself, a fetch from the backend for a shared one. Memory queues serve the
// demo load, whose jobs need no durability and would otherwise cost two writes each. The other
// parts live in their own modules: kinds (registry.ts), queues and pools (topology.ts), running a
// job and recording its end (job-runner.ts), the retry and dead sets' actions
// (failed-set-actions.ts), the counters (counters.ts), timers (background.ts) and storage (backend.ts).
import os from 'node:os';
import type { Config } from '../config.ts';
import type { Service } from '../lifecycle.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { MetricsSource, MetricsView, SetSizes } from '../metrics/source.ts';
import { after, isShared, type Awaitable, type JobBackend, type NewJob, type RecoveredJobs } from './backend.ts';
import { builtinQueueRefusal, demoQueueRefusal, type QueueViews } from './queue-views.ts';
import { KindRegistry } from './registry.ts';
import { Topology } from './topology.ts';
import { Counters } from './counters.ts';
import type { JobQueue } from './queue.ts';
import type { PoolIdentity, WorkerPool } from './worker-pool.ts';
import { JobRunner } from './job-runner.ts';
import type { GivenKey } from './failed-entries.ts';
import type { FailedSet } from './entry-key.ts';
import type { EnqueueOptions, FailedJob, Job, JobCounters, JobKind } from './types.ts';
import { isStorageError } from '../store/ports/storage-error.ts';
import { Background } from './background.ts';
import type { Dispatch, DispatchHost, JobLog, JobSystemHealth } from './dispatch.ts';
import { MirrorDispatch } from './mirror-dispatch.ts';
import { FetchDispatch } from './fetch-dispatch.ts';
import { FailedSetActions, type Acted } from './failed-set-actions.ts';
import { QueueKindError, QueueLimitError } from './queue-errors.ts';

export class JobSystem implements Service, MetricsSource, MetricsView {
  readonly name = 'jobs';
  readonly clock: Clock;
  private readonly kinds = new KindRegistry();
  private readonly topology: Topology;
  private readonly counts = new Counters();
  /** The server's own pool: serves every durable queue. */
  readonly pool: WorkerPool;
  /** What the control API shows of the queues: the memory mirror, or the backend's when it is shared. */
  readonly views: QueueViews;
  private readonly runner: JobRunner;
  private readonly dispatch: Dispatch;
  private readonly failedSets: FailedSetActions;
  private readonly background: Background;
  /** Memory jobs are never stored, so their ids come from here. */
  private nextMemoryId = 1;
  private started = false;
  private stopping = false;

  private logger: JobLog = console;

  /** Set to the server's logger once it exists. */
  get log(): JobLog {
    return this.logger;
  }

  set log(log: JobLog) {
    this.logger = log;
    this.dispatch.useLog(log);
  }

  constructor(
    private readonly config: Config,
    private readonly backend: JobBackend,
    opts: { clock?: Clock } = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.background = new Background(this.clock, () => this.stopping, () => this.log);
    this.runner = new JobRunner({
      kinds: this.kinds,
      backend,
      counts: this.counts,
      clock: this.clock,
      config,
      hasQueue: (name) => this.topology.queue(name) !== undefined,
      taken: (job) => this.dispatch.taken(job),
      retrying: (job) => this.dispatch.retrying(job),
      log: () => this.log,
      retryDelay: (count, unitMs) => this.dispatch.retryDelay(count, unitMs),
    });
    this.topology = new Topology(() => this.clock.now(), (job, from) => this.runner.run(job, from));
    this.pool = this.topology.addPool({ hostname: os.hostname(), pid: process.pid, tag: 'jobscope', labels: [], concurrency: Math.max(1, config.jobConcurrency) });
    this.failedSets = new FailedSetActions(backend, () => this.dispatch, () => this.clock.now(), () => config.jobDeadMax);
    const host: DispatchHost = {
      config,
      clock: this.clock,
      backend,
      topology: this.topology,
      pool: this.pool,
      runner: this.runner,
      log: () => this.log,
      stopping: () => this.stopping,
      durableQueue: (name, persist) => this.durableQueue(name, persist),
      wake: (queue) => this.wake(queue),
      every: (ms, fn) => this.every(ms, fn),
      quietly: (v, what) => this.quietly(v, what),
      warnUnlessOutage: (err, what, fields) => this.warnUnlessOutage(err, what, fields),
      isBuiltin: (name) => this.isBuiltin(name),
      requeue: (jobs) => this.failedSets.requeue(jobs),
    };
    // The one place the backend decides how jobs are dispatched.
    this.dispatch = isShared(backend) ? new FetchDispatch(host, backend) : new MirrorDispatch(host);
    this.views = this.dispatch.views;
  }

  register(kind: string, def: JobKind): void {
    this.kinds.register(kind, def);
  }

  /** The registered kind of a class name (a job pushed by Sidekiq's client names only its class). */
  kindOfClass(cls: string): string | undefined {
    return this.kinds.kindOfClass(cls);
  }

  /** Loads queues, waiting jobs (also those cut off by a crash), retries and counters; starts working. */
  start(): void | Promise<void> {
    if (this.started) return;
    this.started = true;
    return this.dispatch.start((kept) => this.begin(kept));
  }

  /** `degraded` while the job system waits for its backend (at start, or in an outage), with the sentence a banner shows. */
  health(): JobSystemHealth {
    return this.dispatch.health();
  }

  /** Logs a failure, unless it is the backend's outage (the backend logs each outage once). */
  private warnUnlessOutage(err: unknown, what: string, fields: Record<string, unknown> = {}): void {
    if (isStorageError(err) && err.kind === 'unavailable') return;
    this.log.warn({ err, ...fields }, what);
  }

  private begin(kept: RecoveredJobs): void | Promise<void> {
    for (const name of kept.queues) this.durableQueue(name, false);
    for (const name of this.kinds.declaredQueues()) this.durableQueue(name, true);
    this.counts.load(kept.counters);
    this.dispatch.load(kept);
    // Memory jobs only bump counters in memory; save those now and then (durable jobs save their own).
    this.every(1000, () => this.quietly(this.saveCounters(), 'could not save the job counters'));
    const idleMs = this.config.queueForgetIdleMinutes * 60_000;
    if (idleMs > 0) this.every(Math.min(60_000, idleMs / 2), () => this.forgetIdleQueues());
    this.topology.wakeAll();
    return this.dispatch.run();
  }

  /**
   * Runs fn every `ms` on the job system's clock (not keeping the process alive); stopped with it.
   * A promise fn answers is tracked: stop() waits for it.
   */
  every(ms: number, fn: () => unknown): void {
    this.background.every(ms, fn);
  }

  /**
   * Work nobody awaits (a periodic enqueue, a write whose failure is only logged): stop() waits for
   * it before the backend is left and its pool ended, where it would otherwise still be running.
   * Its failure is the caller's to log; here it is only settled.
   */
  track(v: unknown): void {
    this.background.track(v);
  }

  /** Logs the failure of a write whose answer nobody waits for (an asynchronous backend's); stop() waits for it. */
  private quietly(v: Awaitable<unknown>, what: string): void {
    if (v instanceof Promise) this.track(v.catch((err: unknown) => this.warnUnlessOutage(err, what)));
  }

  // ---- what the metrics read -----------------------------------------------------------------

  now(): number {
    return this.clock.now();
  }

  /** In memory, so always up to date (the view is the job system itself), unless the backend is shared. */
  read(): MetricsView | Promise<MetricsView> {
    return this.dispatch.read(this);
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

  /**
   * The retry and dead sets' sizes where they are at hand (the memory mirror, SQLite's dead count);
   * nothing is ever scheduled for later here. A shared backend's come with its read() instead.
   */
  sets(): SetSizes | undefined {
    const retries = this.dispatch.retries();
    const dead = this.backend.deadSize();
    if (retries instanceof Promise || dead instanceof Promise) return undefined;
    return { retry: retries.length, scheduled: 0, dead };
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
   * when there is no such queue (on a shared backend: when the backend knows none).
   */
  deleteQueue(name: string): Awaitable<{ dropped: number } | undefined> {
    const q = this.topology.queue(name);
    if (q && !q.durable) throw new QueueKindError(demoQueueRefusal(name));
    if (this.isBuiltin(name)) throw new QueueKindError(builtinQueueRefusal(name));
    return this.dispatch.deleteQueue(name, q);
  }

  /**
   * Forgets durable non-built-in queues that are empty, have nothing running or waiting to retry,
   * and saw no push or take for --queue-forget-idle-minutes; returns their names (never on a shared
   * backend, where a queue that looks idle here may hold jobs).
   */
  forgetIdleQueues(now = this.clock.now()): string[] {
    return this.dispatch.forgetIdleQueues(now);
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
    const { queue, job, count } = this.newJob(kindName, args, opts);
    return after(this.backend.push(Array.from({ length: count }, () => ({ ...job }))), (jobs) => {
      this.dispatch.pushed(queue, jobs);
      return jobs;
    });
  }

  /** The job `enqueue` pushes (its queue created when new), and how many of it. */
  private newJob(kindName: string, args: Record<string, unknown>, opts: EnqueueOptions): { queue: JobQueue; job: NewJob; count: number } {
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
    return { queue, job, count };
  }

  /** Kinds whose enqueueOnce is being written (an asynchronous backend): not enqueued twice meanwhile. */
  private readonly enqueuingOnce = new Set<string>();

  /**
   * Enqueues the job unless one of that kind is already waiting (periodic work must not pile up):
   * the mirror checks its waiting jobs, a shared backend checks its own when it can.
   */
  enqueueOnce(kindName: string, args: Record<string, unknown> = {}): Awaitable<boolean> {
    if (this.enqueuingOnce.has(kindName)) return false;
    const pushed = this.dispatch.pushOnce(
      kindName,
      () => this.newJob(kindName, args, {}).job,
      () => this.enqueue(kindName, args),
    );
    if (pushed === false) return false;
    if (!(pushed instanceof Promise)) return true;
    this.enqueuingOnce.add(kindName);
    return pushed.then(
      (jobs) => jobs.length > 0,
      (err: unknown) => {
        this.warnUnlessOutage(err, 'could not enqueue a periodic job', { kind: kindName });
        return false;
      },
    ).finally(() => this.enqueuingOnce.delete(kindName));
  }

  /**
   * Enqueues a job of the kind for each of `argsList` unless one with equal args is already waiting
   * or running; answers how many were pushed. On a shared backend the check and the push are one
   * step across every process, so instances that each ask at their start push once between them;
   * otherwise the check is against this process's waiting jobs (mirror-dispatch.ts says what it misses).
   */
  async enqueueEachUnlessPending(kindName: string, argsList: Record<string, unknown>[]): Promise<number> {
    if (argsList.length === 0) return 0;
    const { queue } = this.newJob(kindName, {}, {});
    return this.dispatch.pushEachUnlessPending(queue, kindName, argsList, (args) => this.newJob(kindName, args, {}).job);
  }

  /** Pushes a memory-only job (demo load) into a memory queue. */
  enqueueMemory(queue: JobQueue, kindName: string, cls: string, args: Record<string, unknown>): void {
    const now = this.clock.now();
    queue.push({ id: this.nextMemoryId++, queue: queue.name, class: cls, kind: kindName, args, retry: false, retry_count: 0, created_at: now, enqueued_at: now });
    this.wake(queue.name);
  }

  // ---- the retry and dead sets ----------------------------------------------------------------

  retries(): Awaitable<readonly FailedJob[]> {
    return this.dispatch.retries();
  }

  /** The dead set, newest first. */
  dead(limit: number, offset = 0): Awaitable<FailedJob[]> {
    return this.backend.dead(limit, offset);
  }

  deadSize(): Awaitable<number> {
    return this.backend.deadSize();
  }

  /**
   * Moves entries of the retry set (all, or those the keys name) back into their queues now, as the
   * poll does when they are due; their retry count stays. Answers how many moved and the keys that
   * named none (already gone).
   */
  retryNow(given?: GivenKey[]): Awaitable<Acted> {
    return this.failedSets.retryNow(given);
  }

  /** Deletes entries from the retry set (Sidekiq Web's Delete): they never run again. */
  deleteRetries(given: GivenKey[]): Awaitable<Acted> {
    return this.failedSets.deleteRetries(given);
  }

  /** Moves entries of the retry set (all, or those the keys name) into the dead set now (Sidekiq Web's Kill). */
  killRetries(given?: GivenKey[]): Awaitable<Acted> {
    return this.failedSets.killRetries(given);
  }

  /** Empties the retry set; returns how many jobs it held. */
  clearRetries(): Awaitable<number> {
    this.dispatch.clearRetries();
    return this.backend.clearRetries();
  }

  /** Deletes entries from the dead set by key. */
  deleteDead(given: GivenKey[]): Awaitable<Acted> {
    return this.failedSets.deleteDead(given);
  }

  /** Moves dead jobs (all, or those the keys name) back into their queues; returns how many. */
  retryDead(given?: GivenKey[]): Awaitable<number> {
    return this.failedSets.retryDead(given);
  }

  /** The entries of the retry or dead set one key names (a job page's): none once it left the set. */
  entriesNamed(set: FailedSet, given: GivenKey): Awaitable<FailedJob[]> {
    return this.failedSets.named(set, given);
  }

  /** Empties the dead set; returns how many jobs it held. */
  clearDead(): Awaitable<number> {
    return this.backend.clearDead();
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

  /**
   * Stops taking jobs, asks running ones to give up, waits a little for them and for the work its
   * timers started (a periodic enqueue, a beat: in flight, they would use the backend after it is
   * left and the pool after it ends), saves the counters.
   */
  async stop(graceMs = 3000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const deadline = Date.now() + graceMs;
    this.background.cancelTimers();
    this.topology.stopAll();
    this.dispatch.wakeForStop();
    await this.runner.stop(graceMs);
    try {
      await this.saveCounters();
    } finally {
      this.runner.closed = true;
      await this.background.settle(deadline);
      await this.dispatch.leave();
    }
  }
}
