// The dispatch strategy of a backend this process has to itself (SQLite): every waiting job and the
// retry set are mirrored in memory, so pools take jobs with an array step, metrics and views read
// memory, and the poll that moves due retries back reads no rows. The backend keeps each job until
// it ends: a job cut off by the stop or a crash is waiting again at the next start (recover()).
import { after, type Awaitable, type NewJob, type RecoveredJobs } from './backend.ts';
import { argsKey } from './args-key.ts';
import type { Dispatch, DispatchHost, JobSystemHealth } from './dispatch.ts';
import type { MetricsView } from '../metrics/source.ts';
import type { JobQueue } from './queue.ts';
import { QueueViews } from './queue-views.ts';
import { retryDelay } from './retry.ts';
import { RetrySet } from './retry-set.ts';
import type { FailedJob, Job } from './types.ts';

export class MirrorDispatch implements Dispatch {
  readonly views: QueueViews;
  private readonly retrySet = new RetrySet();
  /** Waiting jobs by kind: enqueueOnce's check. */
  private readonly waitingByKind = new Map<string, number>();

  constructor(private readonly host: DispatchHost) {
    this.views = new QueueViews({ topology: host.topology, now: () => host.clock.now(), isBuiltin: (name) => host.isBuiltin(name) });
  }

  retryDelay(count: number, unitMs: number): number {
    return retryDelay(count, unitMs);
  }

  useLog(): void {}

  start(begin: (kept: RecoveredJobs) => Awaitable<void>): Awaitable<void> {
    return after(this.host.backend.recover(), begin);
  }

  load(kept: RecoveredJobs): void {
    for (const job of kept.waiting) this.pushWaiting(this.host.durableQueue(job.queue, true), job);
    this.retrySet.load(kept.retries);
    this.host.every(Math.max(10, this.host.config.jobPollMs), () =>
      this.host.quietly(this.host.requeue(this.retrySet.takeDue(this.host.clock.now())), 'could not move due retries back'),
    );
  }

  // The pools take from the mirror as soon as it holds jobs: nothing more to begin.
  run(): void {}

  health(): JobSystemHealth {
    return { state: 'ok' };
  }

  taken(job: Job): void {
    this.leftWaiting(job);
  }

  retrying(job: FailedJob): void {
    this.retrySet.insert(job);
  }

  pushed(queue: JobQueue, jobs: Job[]): void {
    for (const j of jobs) this.pushWaiting(queue, j);
    this.host.wake(queue.name);
  }

  requeued(jobs: readonly FailedJob[], now: number): void {
    const touched = new Set<string>();
    for (const job of jobs) {
      this.pushWaiting(this.host.durableQueue(job.queue), { ...job, enqueued_at: now });
      touched.add(job.queue);
    }
    for (const q of touched) this.host.wake(q);
  }

  pushOnce(kind: string, _job: () => NewJob, enqueue: () => Awaitable<Job[]>): Awaitable<Job[]> | false {
    return (this.waitingByKind.get(kind) ?? 0) > 0 ? false : enqueue();
  }

  /**
   * Checked against this process's waiting jobs (what a crash cut off is waiting again after
   * recover()); one its workers already took is not seen, and the second run finds the work done.
   */
  async pushEachUnlessPending(queue: JobQueue, kind: string, argsList: Record<string, unknown>[], job: (args: Record<string, unknown>) => NewJob): Promise<number> {
    const seen = new Set(
      queue
        .peek(0, queue.backlog)
        .filter((j) => j.kind === kind)
        .map((j) => argsKey(j.args)),
    );
    const fresh = argsList.filter((args) => {
      const key = argsKey(args);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (fresh.length === 0) return 0;
    const jobs = await this.host.backend.push(fresh.map(job));
    this.pushed(queue, jobs);
    return jobs.length;
  }

  retries(): readonly FailedJob[] {
    return this.retrySet.list();
  }

  takeRetries(jobs: FailedJob[]): FailedJob[] {
    return this.retrySet.take(new Set(jobs.map((j) => j.id)));
  }

  clearRetries(): void {
    this.retrySet.clear();
  }

  deleteQueue(name: string, q: JobQueue | undefined): Awaitable<{ dropped: number } | undefined> {
    if (!q) return undefined;
    this.retrySet.dropQueue(name);
    return after(this.host.backend.deleteQueues([name]), (dropped) => {
      for (const job of this.host.topology.remove(q)) this.leftWaiting(job);
      return { dropped };
    });
  }

  /**
   * Forgets durable non-built-in queues that are empty, have nothing running or waiting to retry,
   * and saw no push or take for --queue-forget-idle-minutes. Using the name again creates the queue again.
   */
  forgetIdleQueues(now: number): string[] {
    const idleMs = this.host.config.queueForgetIdleMinutes * 60_000;
    if (idleMs <= 0) return [];
    const retrying = this.retrySet.queueNames();
    const { topology, runner } = this.host;
    const idle = [...topology.queues()].filter(
      (q) => q.durable && q.backlog === 0 && now - q.lastActiveAt >= idleMs && !runner.isRunning(q.name) && !retrying.has(q.name) && !this.host.isBuiltin(q.name),
    );
    if (idle.length === 0) return [];
    this.host.quietly(
      this.host.backend.deleteQueues(idle.map((q) => q.name)),
      'could not forget idle queues',
    );
    for (const q of idle) topology.remove(q);
    return idle.map((q) => q.name);
  }

  /** In memory, so always up to date. */
  read(own: MetricsView): MetricsView {
    return own;
  }

  wakeForStop(): void {}

  // Jobs cut off stay queued in the backend: they run again at the next start.
  async leave(): Promise<void> {}

  private pushWaiting(queue: JobQueue, job: Job): void {
    queue.push(job);
    this.waitingByKind.set(job.kind, (this.waitingByKind.get(job.kind) ?? 0) + 1);
  }

  private leftWaiting(job: Job): void {
    this.waitingByKind.set(job.kind, (this.waitingByKind.get(job.kind) ?? 1) - 1);
  }
}
