// The job backend: where durable jobs, the retry and dead sets, the queue list and the counters are
// kept. The job system calls it once per job step and never sees how the step is stored; the SQLite
// adapter is server/store/sqlite-job-backend.ts. Each method is one step that a Redis adapter in
// Sidekiq's layout (/work/shared/spec/sidekiq-redis-layout.md) would do as one MULTI or script: the
// Sidekiq operation is named on each. A method may answer a value (the SQLite adapter: the job
// system goes on synchronously, so its enqueue path stays one transaction with no await) or a
// promise (the Redis adapter: the job system awaits it). `shared` backends (Redis) are also written
// by other processes: the job system then takes jobs from the backend (`fetch`) instead of from its
// in-memory mirror, and reads metrics from it.
import type { FailedJob, Job, JobCounters } from './types.ts';

export type NewJob = Omit<Job, 'id'>;

/** A value now (synchronous adapter) or later (asynchronous adapter). */
export type Awaitable<T> = T | Promise<T>;

/** Applies `f` to `v` at once when it is a value, after it resolves when it is a promise. */
export function after<T, R>(v: Awaitable<T>, f: (t: T) => Awaitable<R>): Awaitable<R> {
  return v instanceof Promise ? v.then(f) : f(v);
}

/** What a backend holds at start: everything the job system mirrors in memory. */
export interface RecoveredJobs {
  /** Queue names ever pushed to and not deleted, oldest first (SMEMBERS queues). */
  queues: string[];
  /** Waiting jobs oldest first, including those cut off in flight by a crash: they run again. */
  waiting: Job[];
  /** The retry set, soonest first. */
  retries: FailedJob[];
  counters: JobCounters;
}

export interface JobBackend {
  /** Loads what is kept; jobs claimed by a process that died are waiting again (reliable fetch's recovery). */
  recover(): Awaitable<RecoveredJobs>;
  /** Remembers a queue name (SADD queues). */
  addQueue(name: string, now: number): Awaitable<void>;
  /** Forgets queues with their waiting and retrying jobs; dead ones stay. Returns the jobs dropped. */
  deleteQueues(names: string[]): Awaitable<number>;
  /** Stores new waiting jobs in one step and gives them ids (LPUSH queue:<name>). */
  push(jobs: NewJob[]): Awaitable<Job[]>;
  /**
   * A worker took the job. SQLite keeps the row queued until the job is acknowledged, so a crash
   * runs it again (what reliable fetch's working list gives): nothing to write. Redis: LMOVE.
   */
  claim(job: Job): Awaitable<void>;
  /** The job ended (done, or failed with no retry): gone, and the counters added in the same step. */
  ack(job: Job, counters: JobCounters): Awaitable<void>;
  /** The job failed with retries left: into the retry set at `run_at` (ZADD retry), counters added. */
  retryLater(job: FailedJob, counters: JobCounters): Awaitable<void>;
  /**
   * The job failed its last retry: into the dead set (ZADD dead), counters added; the oldest deaths
   * past `keep` are dropped (Sidekiq's dead_max_jobs).
   */
  kill(job: FailedJob, counters: JobCounters, keep: number): Awaitable<void>;
  /** Back into their queues as of `now`, from the retry or the dead set. */
  requeue(ids: number[], now: number): Awaitable<void>;
  /** Counters of jobs whose end is not otherwise written (memory jobs): INCRBY stat:processed/failed. */
  addCounters(counters: JobCounters): Awaitable<void>;
  /** A page of the dead set, newest first (ZREVRANGE dead offset offset+limit-1). */
  dead(limit: number, offset?: number): Awaitable<FailedJob[]>;
  /** How many jobs the dead set holds (ZCARD dead). */
  deadSize(): Awaitable<number>;
  /** Removes these jobs from the retry or the dead set (ZREM); returns the ids that were there. */
  deleteFailed(ids: number[], set: 'retry' | 'dead'): Awaitable<number[]>;
  /** Empties the retry set (DEL retry); returns how many it held. */
  clearRetries(): Awaitable<number>;
  /** Dead jobs by id (all when undefined, oldest first); ids not dead are skipped. */
  deadByIds(ids: number[] | undefined): Awaitable<FailedJob[]>;
  /** Empties the dead set; returns how many it held. */
  clearDead(): Awaitable<number>;
}

/** A backend whose every step is done when the call returns (SQLite): the same methods, plain values. */
export type SyncJobBackend = {
  [K in keyof JobBackend]: JobBackend[K] extends (...args: infer A) => infer R ? (...args: A) => Awaited<R> : JobBackend[K];
};
