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
