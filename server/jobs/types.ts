// The shapes the job system passes around. A job is what Sidekiq kept as a JSON payload: a class,
// arguments, the queue it waits in and when it was put there.

export interface Job {
  /** Given by the queue's keeper: the backend's row id for a durable job, a counter for a memory (demo) job. */
  id: number;
  queue: string;
  /** The class name shown to people (Sidekiq's "class"). */
  class: string;
  /** Which registered performer runs it. */
  kind: string;
  args: Record<string, unknown>;
  /** Retries allowed after the first failure; `false` = no retry and no dead set (Sidekiq's retry: false). */
  retry: number | false;
  /** Retries made or scheduled (0 until the first failure schedules one); Sidekiq's count is sidekiqRetryCount's. */
  retry_count: number;
  created_at: number;
  /** When it entered its queue (again): what latency is measured from. */
  enqueued_at: number;
  /** Sidekiq's job id (24 hex chars), for a job kept in Redis; `id` is derived from it there. */
  jid?: string;
  /** The payload exactly as the Redis backend stored it (the working list's member, removed on the job's end). */
  raw?: string;
  /** A Redis job's first failure, epoch ms (Sidekiq keeps `failed_at` across retries). */
  first_failed_at?: number;
}

/** A job in the retry or dead set, with why it failed. */
export interface FailedJob extends Job {
  run_at: number | null;
  failed_at: number | null;
  error: string | null;
  /** Its score in the Redis sorted set (epoch s): with the jid, what names it (entry-key.ts). */
  score?: number;
  /** Not a job: an entry of the set that is not a JSON object with a class (shown raw, deletable, never retried). */
  unreadable?: boolean;
}

export interface PerformContext {
  /** Aborted when the server stops: a long job should give up; it stays queued and runs again at the next start. */
  signal: AbortSignal;
}

export interface JobKind {
  /** Default class name and queue for jobs of this kind. */
  class: string;
  queue: string;
  /** Retries before the dead set; false = drop after the first failure. */
  retry: number | false;
  /** Whether its queue is listed from the start (Jobscope's own queues) or only once used. Default true. */
  declare?: boolean;
  perform(args: Record<string, unknown>, pc: PerformContext): Promise<void> | void;
}

export interface EnqueueOptions {
  queue?: string;
  class?: string;
  retry?: number | false;
  count?: number;
}

export interface JobCounters {
  processed: number;
  failed: number;
}

// Sidekiq's retry_count and Jobscope's. Jobscope counts the retries made or scheduled (the job runner
// compares it with `retry` before each retry), Sidekiq 6.4 counts failures - 1 (job_retry.rb: the
// first failure sets it to 0, each later one adds 1) and has none before the first failure. Every
// count shown or written where Sidekiq's tools read it is Sidekiq's: these convert both ways.

/** Where a job is: a failed job's set, or waiting in (or taken from) its queue. */
export type JobPlace = 'retry' | 'dead' | 'queue';

/**
 * Sidekiq's retry_count for a job Jobscope counts `retries` of. A job in the retry set has had its
 * retry counted already (retries = failures); one that died has not (its last failure scheduled
 * none: retries = failures - 1); a queued one was retried `retries` times (null: it never failed).
 */
export function sidekiqRetryCount(retries: number, place: 'retry' | 'dead'): number;
export function sidekiqRetryCount(retries: number, place: JobPlace): number | null;
export function sidekiqRetryCount(retries: number, place: JobPlace): number | null {
  if (place === 'dead') return retries;
  if (place === 'retry') return Math.max(0, retries - 1);
  return retries > 0 ? retries - 1 : null;
}

/** Jobscope's count of retries from Sidekiq's retry_count (null: absent) of a job in `place`. */
export function jobscopeRetries(sidekiq: number | null, place: JobPlace): number {
  if (sidekiq === null) return 0;
  return place === 'dead' ? sidekiq : sidekiq + 1;
}

// Sidekiq Web's Retry now (SortedEntry#retry) lowers retry_count by one before the push, so a job
// retried by hand that fails again keeps the count it had: the manual retry is no retry of the
// schedule. Its Kill (DeadSet#kill) moves the payload unchanged: Sidekiq's count is kept, so
// Jobscope's drops by one (a retry's is failures, a death's failures - 1).

/** Jobscope's count for a job retried by hand from `place` into its queue (Sidekiq's count - 1; absent stays absent). */
export function retriedByHand(retries: number, place: 'retry' | 'dead'): number {
  return jobscopeRetries(sidekiqRetryCount(retries, place) - 1, 'queue');
}
