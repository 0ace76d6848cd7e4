// What differs between job backends, injected into the one job system (job-system.ts) as Sidekiq
// injects its fetch strategy: how work is taken, where waiting jobs and retries are read, what the
// stop gives back, whether this process beats and recovers others' work. Two strategies:
// - mirror-dispatch.ts: the backend is this process's alone (SQLite): waiting jobs and the retry set
//   are mirrored in memory, pools take jobs from the mirror, views and metrics read it;
// - fetch-dispatch.ts: other processes write the backend too (Redis in Sidekiq's layout, PostgreSQL
//   rows): jobs are fetched from it, views and metrics read it, this process beats, recovers dead
//   processes' jobs and gives its own back when it leaves.
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { MetricsView } from '../metrics/source.ts';
import type { Awaitable, JobBackend, NewJob, RecoveredJobs } from './backend.ts';
import type { JobRunner } from './job-runner.ts';
import type { JobQueue } from './queue.ts';
import type { QueueViews } from './queue-views.ts';
import type { Topology } from './topology.ts';
import type { FailedJob, Job } from './types.ts';
import type { WorkerPool } from './worker-pool.ts';

export type JobLog = { warn(obj: unknown, msg?: string): void; info?(obj: unknown, msg?: string): void };

/** The job system's state for the status route: `degraded` with a sentence while its backend cannot be reached. */
export interface JobSystemHealth {
  state: 'ok' | 'degraded';
  message?: string;
}

/** What a strategy uses of the job system's core. */
export interface DispatchHost {
  readonly config: Config;
  readonly clock: Clock;
  readonly backend: JobBackend;
  readonly topology: Topology;
  /** The server's own pool: serves every durable queue. */
  readonly pool: WorkerPool;
  readonly runner: JobRunner;
  log(): JobLog;
  /** True once stop() began. */
  stopping(): boolean;
  /** The durable queue of that name, created (and remembered in the backend when `persist`) when new. */
  durableQueue(name: string, persist?: boolean): JobQueue;
  /** Lets the pools serving the queue take its jobs (after the start, before the stop). */
  wake(queue: string): void;
  /** Runs fn every `ms` on the job system's clock until the stop. */
  every(ms: number, fn: () => unknown): void;
  /** Logs the failure of a write nobody awaits; the stop waits for it. */
  quietly(v: Awaitable<unknown>, what: string): void;
  /** Logs a failure, unless it is the backend's outage (the backend logs each outage once). */
  warnUnlessOutage(err: unknown, what: string, fields?: Record<string, unknown>): void;
  isBuiltin(name: string): boolean;
  /** Puts retry or dead jobs back into their queues through the backend, as of now. */
  requeue(jobs: FailedJob[]): Awaitable<void>;
}

export interface Dispatch {
  // ---- the lifecycle: start, heartbeat, stop
  /** Loads what the backend keeps and calls `begin` with it; a shared backend that does not answer may begin later. */
  start(begin: (kept: RecoveredJobs) => Awaitable<void>): Awaitable<void>;
  /** Takes over what the backend answered at start beyond queues and counters (waiting jobs, retries). */
  load(kept: RecoveredJobs): void;
  /** Begins taking work (and beating), once the core has begun. */
  run(): Awaitable<void>;
  health(): JobSystemHealth;
  /** The server's logger, once it exists. */
  useLog(log: JobLog): void;
  /** The stop began: whatever waits for work or for the backend is woken. */
  wakeForStop(): void;
  /** The stop's last step, after the background work settled: work taken and not ended goes back. */
  leave(): Promise<void>;

  // ---- taking work: what the core tells the strategy, and the pushes that check first
  /** A worker took a durable job from its queue. */
  taken(job: Job): void;
  /** New jobs were pushed to the backend into this queue. */
  pushed(queue: JobQueue, jobs: Job[]): void;
  /** Jobs went back into their queues from the retry or the dead set as of `now`. */
  requeued(jobs: readonly FailedJob[], now: number): void;
  /**
   * enqueueOnce: pushes the job unless one of its kind waits; false when one is known to wait
   * without asking the backend. `job` builds it, `enqueue` is the plain push.
   */
  pushOnce(kind: string, job: () => NewJob, enqueue: () => Awaitable<Job[]>): Awaitable<Job[]> | false;
  /** enqueueEachUnlessPending into `queue` (already created): answers how many were pushed. */
  pushEachUnlessPending(queue: JobQueue, kind: string, argsList: Record<string, unknown>[], job: (args: Record<string, unknown>) => NewJob): Promise<number>;

  // ---- the retry set: mirrored in memory or only in the backend
  /** Backoff of a job that failed `count` times before. */
  retryDelay(count: number, unitMs: number): number;
  /** A failed job went into the retry set. */
  retrying(job: FailedJob): void;
  /** The retry set, soonest first. */
  retries(): Awaitable<readonly FailedJob[]>;
  /** Takes these jobs out of the retry set's mirror; answers those to act on. */
  takeRetries(jobs: FailedJob[]): FailedJob[];
  /** Empties the retry set's mirror (the core empties the backend's). */
  clearRetries(): void;

  // ---- the queues as read and deleted
  /** What the control API shows of the queues. */
  readonly views: QueueViews;
  /** What the metrics read; `own` is the job system's memory view. */
  read(own: MetricsView): MetricsView | Promise<MetricsView>;
  /** Deletes a durable queue that is no built-in one; undefined when there is no such queue. */
  deleteQueue(name: string, q: JobQueue | undefined): Awaitable<{ dropped: number } | undefined>;
  /** Forgets idle queues (--queue-forget-idle-minutes); answers their names. */
  forgetIdleQueues(now: number): string[];
}
