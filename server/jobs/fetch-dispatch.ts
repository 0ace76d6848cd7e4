// The dispatch strategy of a backend other processes write too (Redis in Sidekiq's layout,
// PostgreSQL rows): waiting jobs and the retry set stay in the backend, jobs are fetched from it
// (fetch-loop.ts), views and metrics read it, due retries are moved back by a poll there, and this
// process beats, recovers the jobs of processes found dead, and gives its own back when it leaves.
import type { Awaitable, NewJob, RecoveredJobs, SharedJobBackend } from './backend.ts';
import { BringUp } from './bring-up.ts';
import type { Dispatch, DispatchHost, JobLog, JobSystemHealth } from './dispatch.ts';
import { FetchLoop } from './fetch-loop.ts';
import type { MetricsView, ProcessStats, QueueStats } from '../metrics/source.ts';
import type { JobQueue } from './queue.ts';
import { orderQueues, parseQueueOrder, type QueueOrder } from './queue-order.ts';
import { QueueKindError } from './queue-errors.ts';
import { heldByAppRefusal } from './queue-views.ts';
import { sidekiqRetryDelay } from './retry.ts';
import { SharedQueueViews } from './shared-queue-views.ts';
import type { FailedJob, Job } from './types.ts';

export class FetchDispatch implements Dispatch {
  readonly views: SharedQueueViews;
  /** --queues: the only queues served, and their order. */
  private readonly queueOrder: QueueOrder | undefined;
  private readonly loop: FetchLoop;
  private readonly bringUp: BringUp;
  /** The fetch loop, or the bring-up's background tries before it: the stop waits for it. */
  private done: Promise<void> | undefined;

  constructor(
    private readonly host: DispatchHost,
    private readonly backend: SharedJobBackend,
  ) {
    const order = host.config.jobQueues ? parseQueueOrder(host.config.jobQueues) : undefined;
    this.queueOrder = order && !('error' in order) ? order : undefined;
    this.views = new SharedQueueViews({ topology: host.topology, now: () => host.clock.now(), isBuiltin: (name) => host.isBuiltin(name) }, backend);
    this.loop = new FetchLoop(host, backend, () => this.served());
    this.bringUp = new BringUp(backend, () => host.stopping());
  }

  // The retry set is Sidekiq's: its backoff too, so Sidekiq's tools see what they expect.
  retryDelay(count: number, unitMs: number): number {
    return sidekiqRetryDelay(count, unitMs);
  }

  useLog(log: JobLog): void {
    this.backend.useLog?.({ info: (o, m) => (log.info ?? log.warn).call(log, o, m), warn: (o, m) => log.warn(o, m) });
  }

  start(begin: (kept: RecoveredJobs) => Awaitable<void>): Promise<void> {
    return this.bringUp.start(begin, (retries) => (this.done = retries));
  }

  // recover() answers no waiting jobs and no retries: they stay in the backend.
  load(): void {}

  async run(): Promise<void> {
    const { host, backend } = this;
    // The outage may start right here: the timer beats again.
    await this.beat().catch((err: unknown) => host.warnUnlessOutage(err, 'Redis heartbeat failed'));
    host.every(backend.beatEveryMs, () => this.beat().catch((err: unknown) => host.warnUnlessOutage(err, 'Redis heartbeat failed')));
    host.every(Math.max(10, host.config.jobPollMs), () =>
      backend.moveDue(host.clock.now()).then(
        (n) => n > 0 && this.loop.poke(),
        (err: unknown) => host.warnUnlessOutage(err, 'could not move due retries back'),
      ),
    );
    this.done = this.loop.run();
  }

  health(): JobSystemHealth {
    const notBegun = this.bringUp.notBegun;
    if (notBegun !== undefined) return { state: 'degraded', message: `${notBegun}; jobs cannot be enqueued or run until it answers (retrying in the background)` };
    const link = this.backend.reachability?.();
    if (link?.reason !== undefined) return { state: 'degraded', message: `Redis at ${link.where} is unreachable: ${link.reason}; fetching is paused and the ends of running jobs are kept until it is back` };
    return { state: 'ok' };
  }

  // Not mirrored: the backend's list is the truth.
  taken(): void {}

  retrying(): void {}

  pushed(): void {
    this.loop.poke();
  }

  requeued(): void {
    this.loop.poke();
  }

  /** The backend checks whether one waits when it can (pushUnlessWaiting); otherwise each call pushes. */
  pushOnce(_kind: string, job: () => NewJob, enqueue: () => Awaitable<Job[]>): Awaitable<Job[]> {
    if (!this.backend.pushUnlessWaiting) return enqueue();
    return this.backend.pushUnlessWaiting(job()).then((j) => {
      if (j) this.loop.poke();
      return j ? [j] : [];
    });
  }

  /**
   * The check and the push are one step across every process (pushUnlessPending), so instances
   * that each ask at their start push once between them.
   */
  async pushEachUnlessPending(_queue: JobQueue, _kind: string, argsList: Record<string, unknown>[], job: (args: Record<string, unknown>) => NewJob): Promise<number> {
    const backend = this.backend;
    let pushed = 0;
    for (const args of argsList) {
      const one = job(args);
      if (backend.pushUnlessPending ? await backend.pushUnlessPending(one) : (await backend.push([one]))[0]) pushed++;
    }
    if (pushed > 0) this.loop.poke();
    return pushed;
  }

  retries(): Promise<FailedJob[]> {
    return this.backend.retries();
  }

  takeRetries(jobs: FailedJob[]): FailedJob[] {
    return jobs;
  }

  clearRetries(): void {}

  /**
   * Whether the queue exists is the backend's answer, not this server's list: another server may
   * have created it (not yet seen here) or deleted it (still served here), and Sidekiq apps' queues
   * are in Redis only. A queue of a Sidekiq app is deleted only when empty (deleteSharedQueue says why).
   */
  async deleteQueue(name: string, q: JobQueue | undefined): Promise<{ dropped: number } | undefined> {
    const done = await this.backend.deleteSharedQueue(name);
    if (done && 'heldByApp' in done) {
      throw new QueueKindError(heldByAppRefusal(name, done.heldByApp));
    }
    if (q) this.host.topology.remove(q);
    return done;
  }

  // This process sees neither other servers' pushes and takes nor the lists' lengths: a queue that
  // looks idle here may hold jobs. Shared queues are only deleted by request.
  forgetIdleQueues(): string[] {
    return [];
  }

  /**
   * The backend holds the durable queues, every process (this one's heartbeat included) and the
   * counters; the demo's memory queues and simulated processes are added from memory.
   */
  read(): Promise<MetricsView> {
    const { topology, pool } = this.host;
    return this.backend.read().then((v) => {
      const queues: QueueStats[] = [...v.queues()];
      for (const q of topology.queues()) if (!q.durable) queues.push(q);
      const processes: ProcessStats[] = [...v.processes()];
      for (const p of topology.processes()) if (p !== pool) processes.push(p);
      const counters = v.counters();
      const sets = v.sets?.();
      return { queues: () => queues, processes: () => processes, counters: () => counters, sets: () => sets };
    });
  }

  wakeForStop(): void {
    this.loop.poke();
    this.bringUp.wake();
  }

  async leave(): Promise<void> {
    await this.done;
    await this.backend.leave().catch((err: unknown) => this.host.log().warn({ err }, 'could not leave Redis cleanly; its jobs in flight run again once its heartbeat expires'));
  }

  /**
   * Queue names this process takes jobs from, in the order of this fetch: the --queues list as
   * Sidekiq orders it (queue-order.ts), else its durable queues (built-in ones and those Jobscope created).
   */
  private served(): string[] {
    if (this.queueOrder) return orderQueues(this.queueOrder);
    const names: string[] = [];
    for (const q of this.host.topology.queues()) if (q.durable) names.push(q.name);
    return names;
  }

  /** Heartbeat, then the queues other servers created, then the jobs of dead processes back into their queues. */
  private async beat(): Promise<void> {
    const { host, backend } = this;
    const p = host.pool;
    const queues = this.queueOrder ? [...new Set(this.queueOrder.weighted)] : this.served();
    await backend.beat({ ...p.identity, startedAt: p.startedAt, queues, work: p.work.list() });
    for (const name of await backend.servedQueues()) {
      const q = host.topology.queue(name);
      if (!q && host.topology.durableCount < host.config.maxQueues) host.durableQueue(name, false);
    }
    if ((await backend.recoverOrphans()) > 0) this.loop.poke();
  }
}
