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
import type { MetricsSource, MetricsView } from '../metrics/source.ts';
import { after, isEntryAddressed, isShared, type Awaitable, type JobBackend, type NewJob, type RecoveredJobs, type SharedJobBackend } from './backend.ts';
import { builtinQueueRefusal, demoQueueRefusal, heldByAppRefusal, QueueViews } from './queue-views.ts';
import { retryDelay, sidekiqRetryDelay } from './retry.ts';
import type { ProcessStats, QueueStats } from '../metrics/source.ts';
import { KindRegistry } from './registry.ts';
import { Topology } from './topology.ts';
import { RetrySet } from './retry-set.ts';
import { Counters } from './counters.ts';
import type { JobQueue } from './queue.ts';
import type { PoolIdentity, WorkerPool } from './worker-pool.ts';
import { JobRunner } from './job-runner.ts';
import type { EntryKey, FailedSet } from './entry-key.ts';
import { missingKeys, parseKeys, refuseUnreadable, resolveKeys, rowIds, type GivenKey } from './failed-entries.ts';
import { WorkState } from './work-state.ts';
import type { EnqueueOptions, FailedJob, Job, JobCounters, JobKind } from './types.ts';
import { isStorageError } from '../store/ports/storage-error.ts';
import { orderQueues, parseQueueOrder, type QueueOrder } from './queue-order.ts';

export class QueueKindError extends Error {}

/** Args as one string whatever the order of their keys: equal args, equal keys. */
function argsKey(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(argsKey).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${argsKey(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** What a retry or delete by keys did: how many entries it acted on, and the keys that named none (already gone). */
export interface Acted {
  count: number;
  missing: GivenKey[];
}
/** Creating the queue would pass --max-queues. */
export class QueueLimitError extends Error {}

type Log = { warn(obj: unknown, msg?: string): void; info?(obj: unknown, msg?: string): void };

/** The job system's state for the status route: `degraded` with a sentence while its backend cannot be reached. */
export interface JobSystemHealth {
  state: 'ok' | 'degraded';
  message?: string;
}

// A shared backend that does not answer at start is tried again in the background, from this wait
// doubling up to the cap: the server listens meanwhile, and the job system begins once it answers.
const FIRST_RETRY_MS = 500;
const MOST_RETRY_MS = 10_000;
/** How long the start waits for a first answer before it goes on degraded (the try goes on meanwhile). */
const START_WAIT_MS = 3000;

export class JobSystem implements Service, MetricsSource, MetricsView {
  readonly name = 'jobs';
  readonly clock: Clock;
  private readonly kinds = new KindRegistry();
  private readonly topology: Topology;
  private readonly retrySet = new RetrySet();
  private readonly counts = new Counters();
  /** The server's own pool: serves every durable queue. */
  readonly pool: WorkerPool;
  /** What the control API shows of the queues: the memory mirror, or Redis when the backend is shared. */
  readonly views: QueueViews;
  private readonly waitingByKind = new Map<string, number>();
  private readonly runner: JobRunner;
  /** Memory jobs are never stored, so their ids come from here. */
  private nextMemoryId = 1;
  private readonly timers: Cancel[] = [];
  private started = false;
  private stopping = false;

  /** --queues (with a shared backend): the only queues served, and their order. */
  private readonly queueOrder: QueueOrder | undefined;
  /** Set when the backend is shared (Redis): jobs are fetched from it, metrics read from it. */
  private readonly shared: SharedJobBackend | undefined;
  /** Wakes the fetch loop from its idle wait (a local enqueue, a freed slot). */
  private fetchWake: (() => void) | null = null;
  /** Set by poke(): a job was enqueued here or a slot freed while a fetch was out, so its short answer is stale. */
  private poked = false;
  private fetchLoopDone: Promise<void> | undefined;
  /** Ends the bring-up's wait at the stop. */
  private stopWake: (() => void) | null = null;
  /** Jobs fetched from the shared backend and running: the heartbeat's `busy` and workers hash. */
  private readonly work = new WorkState();

  private logger: Log = console;
  /** While a shared backend has not answered at start: why (the sentence the status shows). */
  private notBegun: string | undefined;

  /** Set to the server's logger once it exists. */
  get log(): Log {
    return this.logger;
  }

  set log(log: Log) {
    this.logger = log;
    this.shared?.useLog?.({ info: (o, m) => (log.info ?? log.warn).call(log, o, m), warn: (o, m) => log.warn(o, m) });
  }

  constructor(
    private readonly config: Config,
    private readonly backend: JobBackend,
    opts: { clock?: Clock } = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.shared = isShared(backend) ? backend : undefined;
    const order = this.shared && config.jobQueues ? parseQueueOrder(config.jobQueues) : undefined;
    this.queueOrder = order && !('error' in order) ? order : undefined;
    const shared = this.shared !== undefined;
    this.runner = new JobRunner({
      kinds: this.kinds,
      backend,
      retrySet: this.retrySet,
      counts: this.counts,
      clock: this.clock,
      config,
      hasQueue: (name) => this.topology.queue(name) !== undefined,
      taken: (job) => {
        if (!shared) this.waitingByKind.set(job.kind, (this.waitingByKind.get(job.kind) ?? 1) - 1);
      },
      log: () => this.log,
      // On Redis the retry set is Sidekiq's: its backoff too, so Sidekiq's tools see what they expect.
      retryDelay: shared ? sidekiqRetryDelay : retryDelay,
      shared,
    });
    this.topology = new Topology(() => this.clock.now(), (job, from) => this.runner.run(job, from));
    this.pool = this.topology.addPool({ hostname: os.hostname(), pid: process.pid, tag: 'jobscope', labels: [], concurrency: Math.max(1, config.jobConcurrency) });
    this.views = new QueueViews({ topology: this.topology, shared: this.shared, now: () => this.clock.now(), isBuiltin: (name) => this.isBuiltin(name) });
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
    if (this.shared) return this.bringUp(this.shared);
    return after(this.backend.recover(), (kept) => this.begin(kept));
  }

  /**
   * A shared backend (Redis) may be down, refusing or frozen at start: the first try is awaited
   * up to START_WAIT_MS (the backend bounds the try itself), then the server starts DEGRADED and keeps trying in the background with
   * a capped backoff; job routes answer 503 meanwhile (the backend's StorageError) and health()
   * says why. The job system begins by itself once the backend answers.
   */
  private async bringUp(backend: SharedJobBackend): Promise<void> {
    const where = backend.reachability?.();
    this.notBegun = where ? `waiting for Redis at ${where.where}: connecting` : 'waiting for the job store: connecting';
    const first = this.tryBegin(backend);
    let timer: NodeJS.Timeout | undefined;
    const begun = await Promise.race([first, new Promise<false>((r) => (timer = setTimeout(() => r(false), START_WAIT_MS)))]);
    clearTimeout(timer);
    if (begun === true) return;
    const retries = (async () => {
      if (await first) return;
      for (let wait = FIRST_RETRY_MS; !this.stopping; wait = Math.min(MOST_RETRY_MS, wait * 2)) {
        // Cut short once the backend's own reconnect succeeded: the begin need not wait out the backoff.
        const until = Date.now() + wait;
        do await this.pause(Math.min(250, wait), 'bring-up');
        while (!this.stopping && Date.now() < until && backend.reachability?.().reason !== undefined);
        if (this.stopping || (await this.tryBegin(backend))) return;
      }
    })();
    this.fetchLoopDone = retries;
  }

  private async tryBegin(backend: SharedJobBackend): Promise<boolean> {
    let kept: RecoveredJobs;
    try {
      kept = await backend.recover();
    } catch (err) {
      const where = backend.reachability?.();
      const reason = where?.reason ?? (err instanceof Error ? err.message : String(err));
      this.notBegun = where ? `waiting for Redis at ${where.where}: ${reason}` : `waiting for the job store: ${reason}`;
      return false;
    }
    this.notBegun = undefined;
    // Answered during the stop: beginning now would start timers the stop has already cancelled.
    if (!this.stopping) await this.begin(kept);
    return true;
  }

  /** `degraded` while the job system waits for its backend (at start, or in an outage), with the sentence a banner shows. */
  health(): JobSystemHealth {
    if (this.notBegun !== undefined) return { state: 'degraded', message: `${this.notBegun}; jobs cannot be enqueued or run until it answers (retrying in the background)` };
    const link = this.shared?.reachability?.();
    if (link?.reason !== undefined) return { state: 'degraded', message: `Redis at ${link.where} is unreachable: ${link.reason}; fetching is paused and the ends of running jobs are kept until it is back` };
    return { state: 'ok' };
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
    for (const job of kept.waiting) this.pushWaiting(this.durableQueue(job.queue, true), job);
    this.retrySet.load(kept.retries);
    this.every(Math.max(10, this.config.jobPollMs), () => this.moveDueRetries());
    // Memory jobs only bump counters in memory; save those now and then (durable jobs save their own).
    this.every(1000, () => this.quietly(this.saveCounters(), 'could not save the job counters'));
    const idleMs = this.config.queueForgetIdleMinutes * 60_000;
    if (idleMs > 0) this.every(Math.min(60_000, idleMs / 2), () => this.forgetIdleQueues());
    this.topology.wakeAll();
    if (this.shared) return this.beginShared(this.shared);
  }

  // ---- a shared backend (Redis): fetch, heartbeat, due retries --------------------------------

  /**
   * Queue names this process takes jobs from, in the order of this fetch: the --queues list as
   * Sidekiq orders it (queue-order.ts), else its durable queues (built-in ones and those Jobscope created).
   */
  private served(): string[] {
    if (this.queueOrder) return orderQueues(this.queueOrder);
    const names: string[] = [];
    for (const q of this.topology.queues()) if (q.durable) names.push(q.name);
    return names;
  }

  private async beginShared(backend: SharedJobBackend): Promise<void> {
    // The outage may start right here: the timer beats again.
    await this.beat(backend).catch((err: unknown) => this.warnUnlessOutage(err, 'Redis heartbeat failed'));
    this.every(backend.beatEveryMs, () => this.beat(backend).catch((err: unknown) => this.warnUnlessOutage(err, 'Redis heartbeat failed')));
    this.every(Math.max(10, this.config.jobPollMs), () =>
      backend.moveDue(this.clock.now()).then(
        (n) => n > 0 && this.poke(),
        (err: unknown) => this.warnUnlessOutage(err, 'could not move due retries back'),
      ),
    );
    this.fetchLoopDone = this.fetchLoop(backend);
  }

  /** Heartbeat, then the queues other servers created, then the jobs of dead processes back into their queues. */
  private async beat(backend: SharedJobBackend): Promise<void> {
    const p = this.pool;
    const queues = this.queueOrder ? [...new Set(this.queueOrder.weighted)] : this.served();
    await backend.beat({ ...p.identity, startedAt: p.startedAt, queues, work: this.work.list() });
    for (const name of await backend.servedQueues()) {
      const q = this.topology.queue(name);
      if (!q && this.topology.durableCount < this.config.maxQueues) this.durableQueue(name, false);
    }
    if ((await backend.recoverOrphans()) > 0) this.poke();
  }

  private poke(): void {
    this.poked = true;
    this.fetchWake?.();
  }

  /** Waits for poke(), or at most `ms` when given; `bring-up` waits are only ended by the stop. */
  private pause(ms?: number, why: 'fetch' | 'bring-up' = 'fetch'): Promise<void> {
    if (why === 'bring-up') {
      return new Promise((resolve) => {
        const t = setTimeout(resolve, ms);
        this.stopWake = () => (clearTimeout(t), resolve());
      });
    }
    return new Promise((resolve) => {
      const t = ms === undefined ? undefined : setTimeout(() => {
        this.fetchWake = null;
        resolve();
      }, ms);
      this.fetchWake = () => {
        clearTimeout(t);
        this.fetchWake = null;
        resolve();
      };
    });
  }

  /**
   * Fills the pool's free slots with jobs taken from Redis (reliable fetch), all free slots in one
   * round trip; idles a poll period once the queues ran short, unless poked meanwhile.
   */
  private async fetchLoop(backend: SharedJobBackend): Promise<void> {
    const idleMs = Math.max(10, Math.min(this.config.jobPollMs, 1000));
    let outageWait = 100;
    while (!this.stopping) {
      const free = this.pool.concurrency - this.pool.busy;
      // No timer: every freed slot pokes, and so does the stop.
      if (free <= 0) {
        await this.pause();
        continue;
      }
      this.poked = false;
      let jobs: Job[];
      try {
        jobs = await backend.fetch(this.served(), free);
        outageWait = 100;
      } catch (err) {
        // Fetching pauses through an outage and resumes by itself; waits grow to 2 s.
        this.warnUnlessOutage(err, 'could not fetch a job from Redis');
        await this.pause(outageWait);
        outageWait = Math.min(2000, outageWait * 2);
        continue;
      }
      // Taken during the stop: they stay in the working list, which leave() puts back into their queues.
      if (this.stopping) break;
      for (const job of jobs) this.runFetched(job);
      // Fewer than asked: the queues were empty at that moment. A poke since (a local enqueue, a
      // freed slot) may have changed that; otherwise only other processes' pushes can, so idle.
      if (jobs.length < free && !this.poked) await this.pause(idleMs);
    }
  }

  private runFetched(job: Job): void {
    const queue = this.topology.queue(job.queue) ?? this.durableQueue(job.queue, false);
    const slot = this.work.start(job, this.clock.now());
    this.pool.busy++;
    void this.runner.run(job, queue).finally(() => {
      this.work.end(slot);
      this.pool.busy--;
      this.poke();
    });
  }

  /**
   * Runs fn every `ms` on the job system's clock (not keeping the process alive); stopped with it.
   * A promise fn answers is tracked: stop() waits for it.
   */
  every(ms: number, fn: () => unknown): void {
    this.timers.push(
      this.clock.every(ms, () => {
        if (this.stopping) return;
        try {
          this.track(fn());
        } catch (err) {
          this.log.warn({ err }, 'job system timer failed');
        }
      }),
    );
  }

  /** Writes started by timers and fire-and-forget calls, not yet settled. */
  private readonly background = new Set<Promise<unknown>>();

  /**
   * Work nobody awaits (a periodic enqueue, a write whose failure is only logged): stop() waits for
   * it before the backend is left and its pool ended, where it would otherwise still be running.
   * Its failure is the caller's to log; here it is only settled.
   */
  track(v: unknown): void {
    if (!(v instanceof Promise)) return;
    const settled: Promise<unknown> = v.then(
      () => this.background.delete(settled),
      () => this.background.delete(settled),
    );
    this.background.add(settled);
  }

  /** Waits for tracked work, also work it starts meanwhile, until `deadline` (real time, epoch ms). */
  private async settleBackground(deadline: number): Promise<void> {
    while (this.background.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.background]), new Promise((r) => (timer = setTimeout(r, left)))]);
      clearTimeout(timer);
    }
  }

  // ---- what the metrics read -----------------------------------------------------------------

  now(): number {
    return this.clock.now();
  }

  /** In memory, so always up to date: the view is the job system itself. */
  read(): MetricsView | Promise<MetricsView> {
    if (!this.shared) return this;
    // Redis holds the durable queues, every process (this one's heartbeat included) and the counters;
    // the demo's memory queues and simulated processes are added from memory.
    return this.shared.read().then((v) => {
      const queues: QueueStats[] = [...v.queues()];
      for (const q of this.topology.queues()) if (!q.durable) queues.push(q);
      const processes: ProcessStats[] = [...v.processes()];
      for (const p of this.topology.processes()) if (p !== this.pool) processes.push(p);
      const counters = v.counters();
      return { queues: () => queues, processes: () => processes, counters: () => counters };
    });
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
   * when there is no such queue. On Redis the queue is Redis's (see deleteShared).
   */
  deleteQueue(name: string): Awaitable<{ dropped: number } | undefined> {
    const q = this.topology.queue(name);
    if (q && !q.durable) throw new QueueKindError(demoQueueRefusal(name));
    if (this.isBuiltin(name)) throw new QueueKindError(builtinQueueRefusal(name));
    if (this.shared) return this.deleteShared(this.shared, name, q);
    if (!q) return undefined;
    this.retrySet.dropQueue(name);
    return after(this.backend.deleteQueues([name]), (dropped) => {
      for (const job of this.topology.remove(q)) this.waitingByKind.set(job.kind, (this.waitingByKind.get(job.kind) ?? 1) - 1);
      return { dropped };
    });
  }

  /**
   * Whether the queue exists is Redis's answer, not this server's list: another server may have
   * created it (not yet seen here) or deleted it (still served here), and Sidekiq apps' queues are
   * in Redis only. A queue of a Sidekiq app is deleted only when empty (deleteSharedQueue says why).
   */
  private async deleteShared(backend: SharedJobBackend, name: string, q: JobQueue | undefined): Promise<{ dropped: number } | undefined> {
    const done = await backend.deleteSharedQueue(name);
    if (done && 'heldByApp' in done) {
      throw new QueueKindError(heldByAppRefusal(name, done.heldByApp));
    }
    if (q) this.topology.remove(q);
    return done;
  }

  /**
   * Forgets durable non-built-in queues that are empty, have nothing running or waiting to retry,
   * and saw no push or take for --queue-forget-idle-minutes; returns their names. Using the name
   * again creates the queue again.
   */
  forgetIdleQueues(now = this.clock.now()): string[] {
    const idleMs = this.config.queueForgetIdleMinutes * 60_000;
    // On Redis this process sees neither other servers' pushes and takes nor the lists' lengths:
    // a queue that looks idle here may hold jobs. Shared queues are only deleted by request.
    if (idleMs <= 0 || this.shared) return [];
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
    const { queue, job, count } = this.newJob(kindName, args, opts);
    return after(this.backend.push(Array.from({ length: count }, () => ({ ...job }))), (jobs) => {
      if (this.shared) {
        this.poke();
        return jobs;
      }
      for (const j of jobs) this.pushWaiting(queue, j);
      this.wake(queue.name);
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

  /** Enqueues the job unless one of that kind is already waiting (periodic work must not pile up). */
  enqueueOnce(kindName: string, args: Record<string, unknown> = {}): Awaitable<boolean> {
    if ((this.waitingByKind.get(kindName) ?? 0) > 0 || this.enqueuingOnce.has(kindName)) return false;
    // A shared backend's waiting jobs are not mirrored here (waitingByKind stays 0): it checks them itself when it can.
    const once = this.shared?.pushUnlessWaiting?.bind(this.shared);
    const pushed = once
      ? once(this.newJob(kindName, args, {}).job).then((j) => {
          if (j) this.poke();
          return j ? [j] : [];
        })
      : this.enqueue(kindName, args);
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
   * step across every process (pushUnlessPending), so instances that each ask at their start push
   * once between them. Otherwise the check is against this process's waiting jobs (the SQLite job
   * system is one process's; what a crash cut off is waiting again after recover()); one its workers
   * already took is not seen, and the second run finds the work done.
   */
  async enqueueEachUnlessPending(kindName: string, argsList: Record<string, unknown>[]): Promise<number> {
    if (argsList.length === 0) return 0;
    const shared = this.shared;
    if (shared) {
      let pushed = 0;
      for (const args of argsList) {
        const { job } = this.newJob(kindName, args, {});
        if (shared.pushUnlessPending ? await shared.pushUnlessPending(job) : (await shared.push([job]))[0]) pushed++;
      }
      if (pushed > 0) this.poke();
      return pushed;
    }
    const { queue } = this.newJob(kindName, {}, {});
    const seen = new Set(
      queue
        .peek(0, queue.backlog)
        .filter((j) => j.kind === kindName)
        .map((j) => argsKey(j.args)),
    );
    const fresh = argsList.filter((args) => {
      const key = argsKey(args);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (fresh.length === 0) return 0;
    const jobs = await this.backend.push(fresh.map((args) => this.newJob(kindName, args, {}).job));
    for (const j of jobs) this.pushWaiting(queue, j);
    this.wake(queue.name);
    return jobs.length;
  }

  /** Logs the failure of a write whose answer nobody waits for (an asynchronous backend's); stop() waits for it. */
  private quietly(v: Awaitable<unknown>, what: string): void {
    if (v instanceof Promise) this.track(v.catch((err: unknown) => this.warnUnlessOutage(err, what)));
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

  retries(): Awaitable<readonly FailedJob[]> {
    return this.shared ? this.shared.retries() : this.retrySet.list();
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
    return this.actOn('retry', given, (found) => this.requeueEntries('retry', found, given !== undefined));
  }

  /** Deletes entries from the retry set (Sidekiq Web's Delete): they never run again. */
  deleteRetries(given: GivenKey[]): Awaitable<Acted> {
    return this.actOn('retry', given, (found) => this.removeEntries('retry', found));
  }

  /** Empties the retry set; returns how many jobs it held. */
  clearRetries(): Awaitable<number> {
    this.retrySet.clear();
    return this.backend.clearRetries();
  }

  /** Deletes entries from the dead set by key. */
  deleteDead(given: GivenKey[]): Awaitable<Acted> {
    return this.actOn('dead', given, (found) => this.removeEntries('dead', found));
  }

  /** Moves dead jobs (all, or those the keys name) back into their queues; returns how many. */
  retryDead(given?: GivenKey[]): Awaitable<number> {
    return after(this.actOn('dead', given, (found) => this.requeueEntries('dead', found, given !== undefined)), (a) => a.count);
  }

  /** The entries of `set` the keys could name (all when absent): Redis's by key, else the mirror's or the rows'. */
  private entriesFor(set: FailedSet, keys: EntryKey[] | undefined): Awaitable<readonly FailedJob[]> {
    if (isEntryAddressed(this.backend)) return this.backend.entries(set, keys);
    if (set === 'retry') return this.retries();
    return this.backend.deadByIds(keys && rowIds(keys));
  }

  /** Resolves the keys (EntryKeyError when one cannot name an entry or names several), acts, counts exactly what was done. */
  private actOn(set: FailedSet, given: GivenKey[] | undefined, act: (found: FailedJob[]) => Awaitable<readonly FailedJob[]>): Awaitable<Acted> {
    const keys = given && parseKeys(given);
    return after(this.entriesFor(set, keys), (all) => {
      const r = keys && given ? resolveKeys(all, keys, given, set) : { found: [...all], byKey: [] };
      return after(act(r.found), (done) => ({ count: done.length, missing: given ? missingKeys(r, given, done) : [] }));
    });
  }

  /** Entries that are no job are refused when named, skipped when all are moved. */
  private requeueEntries(set: FailedSet, found: FailedJob[], named: boolean): Awaitable<readonly FailedJob[]> {
    if (named) refuseUnreadable(found, set);
    const jobs = found.filter((j) => !j.unreadable);
    if (isEntryAddressed(this.backend)) {
      return this.backend.requeueEntries(set, jobs, this.clock.now()).then((moved) => {
        this.poke();
        return moved;
      });
    }
    const taken = set === 'retry' && !this.shared ? this.retrySet.take(new Set(jobs.map((j) => j.id))) : jobs;
    return after(this.requeueFailed(taken), () => taken);
  }

  private removeEntries(set: FailedSet, found: FailedJob[]): Awaitable<readonly FailedJob[]> {
    if (isEntryAddressed(this.backend)) return this.backend.removeEntries(set, found);
    if (set === 'retry' && !this.shared) this.retrySet.take(new Set(found.map((j) => j.id)));
    return after(this.backend.deleteFailed(found.map((j) => j.id), set), (ids) => {
      const gone = new Set(ids);
      return found.filter((j) => gone.has(j.id));
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
        if (this.shared) return this.poke();
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
    for (const cancel of this.timers) cancel();
    this.topology.stopAll();
    this.poke();
    this.stopWake?.();
    await this.runner.stop(graceMs);
    try {
      await this.saveCounters();
    } finally {
      this.runner.closed = true;
      await this.settleBackground(deadline);
      if (this.shared) {
        await this.fetchLoopDone;
        await this.shared.leave().catch((err: unknown) => this.log.warn({ err }, 'could not leave Redis cleanly; its jobs in flight run again once its heartbeat expires'));
      }
    }
  }
}
