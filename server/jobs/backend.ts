// The job backend: where durable jobs, the retry and dead sets, the queue list and the counters are
// kept. The job system calls it once per job step and never sees how the step is stored; the SQLite
// adapter is server/store/sqlite-job-backend.ts. Each method is one step that a Redis adapter in
// Sidekiq's layout (the spec's sidekiq-redis-layout.md) would do as one MULTI or script: the
// Sidekiq operation is named on each. A method may answer a value (the SQLite adapter: the job
// system goes on synchronously, so its enqueue path stays one transaction with no await) or a
// promise (the Redis adapter: the job system awaits it). `shared` backends (Redis, PostgreSQL) are
// also written by other processes: the job system then takes jobs from the backend (`fetch`,
// fetch-dispatch.ts) instead of from its in-memory mirror (mirror-dispatch.ts), and reads metrics from it.
import type { FailedJob, Job, JobCounters } from './types.ts';
import type { MetricsView } from '../metrics/source.ts';
import type { EntryKey, FailedSet } from './entry-key.ts';

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
  /**
   * Back into their queues as of `now`, from the retry or the dead set; `byHand` (Retry now, not the
   * schedule) lowers each count as Sidekiq's SortedEntry#retry does (types.ts retriedByHand).
   */
  requeue(ids: number[], now: number, byHand?: boolean): Awaitable<void>;
  /**
   * Retry set entries into the dead set, dead as of `now` (Sidekiq Web's Kill), the oldest deaths
   * past `keep` dropped; answers the ids that were still in the retry set.
   */
  killRetries(ids: number[], now: number, keep: number): Awaitable<number[]>;
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

/** A job this process is running, as Sidekiq's `<identity>:workers` hash lists it. */
export interface InFlightJob {
  /** The worker slot's id (Sidekiq: the thread's). */
  tid: string;
  queue: string;
  /** The payload exactly as stored in Redis (Sidekiq 6.4 keeps the job's JSON string). */
  payload: string;
  /** When it started, epoch ms. */
  runAt: number;
}

/** This process as Sidekiq's ProcessSet lists it. */
export interface ProcessBeat {
  hostname: string;
  pid: number;
  tag: string;
  labels: string[];
  concurrency: number;
  /** Epoch ms. */
  startedAt: number;
  queues: string[];
  /** The jobs running now; `busy` is their number. */
  work: InFlightJob[];
}

/** A queue in a shared backend as Sidekiq's API sees it (Queue#size, #latency's entry, ProcessSet). */
export interface SharedQueue {
  name: string;
  /** LLEN queue:<name>. */
  size: number;
  /** `enqueued_at` of the job that runs next (LINDEX -1), epoch ms; null when empty or not a job. */
  oldestEnqueuedAt: number | null;
  /** Live processes other than this one whose heartbeat lists the queue. */
  otherProcesses: number;
  /** In `jobscope:queues`: a Jobscope server created it; otherwise a Sidekiq app pushed to it. */
  createdByJobscope: boolean;
}

/** What deleting a queue of a shared backend did; undefined: Redis knows no such queue. */
export type SharedQueueDeletion = { dropped: number } | { heldByApp: number } | undefined;

/**
 * A backend other processes write too (Redis, shared with Sidekiq and other Jobscope servers): jobs
 * are taken from it, not from the in-memory mirror; metrics are read from it; the retry set is
 * polled in it. `recover()` answers no waiting jobs and no retries (they stay in the backend).
 */
export interface SharedJobBackend extends JobBackend {
  readonly shared: true;
  /**
   * Takes up to `max` waiting jobs into this process's working list in one step (reliable fetch),
   * each from the first of `queues` not empty, as that many single fetches would; [] when all are empty.
   */
  fetch(queues: string[], max: number): Promise<Job[]>;
  /**
   * Pushes the job unless one of its kind waits in its queue (taken by no process yet), checked and
   * pushed as one step across every process sharing the backend; null when one waits. What
   * enqueueOnce uses when present: periodic work neither piles up behind busy slots nor is pushed by
   * every instance each period (PostgreSQL: an advisory lock; Redis: one Lua script). Optional: a
   * backend without it has each enqueueOnce push.
   */
  pushUnlessWaiting?(job: NewJob): Promise<Job | null>;
  /**
   * Pushes the job unless one of its queue and kind with equal args is pending: waiting, running
   * (taken by a process, not yet ended) or in the retry set; checked and pushed as one step across
   * every process sharing the backend; null when there is one. For work done once per object
   * whatever asks for it (an archive's listing) that every instance asks for at its start: N
   * instances starting on one backend push it once, not N times. Running and retrying jobs count
   * here, unlike pushUnlessWaiting's: they will do the work the new one would. Dead ones do not.
   * Optional: without it each call pushes.
   */
  pushUnlessPending?(job: NewJob): Promise<Job | null>;
  /** Moves retries due at `now` back into their queues (Sidekiq's scheduler poll); returns how many. */
  moveDue(now: number): Promise<number>;
  /** Puts the jobs in flight of processes found dead back into their queues; returns how many. */
  recoverOrphans(): Promise<number>;
  /** Writes this process's heartbeat (SADD processes, HSET <identity> info busy beat quiet, <identity>:workers, EXPIRE). */
  beat(p: ProcessBeat): Promise<void>;
  /** Milliseconds between beats. */
  readonly beatEveryMs: number;
  /** The retry set, soonest first. */
  retries(): Promise<FailedJob[]>;
  /** Queue names Jobscope servers created (they serve these and their built-in ones). */
  servedQueues(): Promise<string[]>;
  /** Sidekiq's Queue.all (byte order, at most --sidekiq-max-queues), each with size and oldest job; `total` = all names. */
  queueList(): Promise<{ queues: SharedQueue[]; total: number }>;
  /** One queue; null when Redis knows no such queue (not in `queues`, not Jobscope's, no jobs). */
  queueInfo(name: string): Promise<SharedQueue | null>;
  /** A page of a queue's jobs in the order they run (the list's right end first); null as queueInfo. */
  queuePage(name: string, offset: number, limit: number): Promise<{ total: number; jobs: Job[] } | null>;
  /** LLEN queue:<name>. */
  queueSize(name: string): Promise<number>;
  /**
   * Deletes a queue Jobscope created with its waiting and retrying jobs; a queue of a Sidekiq app
   * only when it is empty (`heldByApp`: how many jobs kept it).
   */
  deleteSharedQueue(name: string): Promise<SharedQueueDeletion>;
  /** One consistent read of the whole Redis, as Sidekiq's API computes it. */
  read(): Promise<MetricsView>;
  /** This process leaves: its jobs in flight go back to their queues, its heartbeat and workers hashes are removed, the connection closed. */
  leave(): Promise<void>;
  /**
   * Where the backend lives (host:port) and, while it cannot be reached, why, as a sentence: what
   * the job system's status shows. Optional: a backend without it is taken as reachable.
   */
  reachability?(): { where: string; reason?: string };
  /** Where the backend logs the start and end of each outage (once each). Optional. */
  useLog?(log: { info(obj: unknown, msg?: string): void; warn(obj: unknown, msg?: string): void }): void;
}

/**
 * A backend whose retry and dead entries have no unique number of their own (Redis: members of a
 * sorted set, named by score and jid as Sidekiq Web names them): the job system finds them by key
 * and acts on the entries found, each removed exactly (ZREM of its member), never by a number that
 * two entries could share. Row backends (SQLite, PostgreSQL) act by row id instead.
 */
export interface EntryAddressed {
  /** The entries of `set` the keys name (every entry when undefined), those that are no job included. */
  entries(set: FailedSet, keys: EntryKey[] | undefined): Promise<FailedJob[]>;
  /** Removes these entries; answers those this call removed (another may have taken one first). */
  removeEntries(set: FailedSet, entries: FailedJob[]): Promise<FailedJob[]>;
  /** Puts these entries back into their queues as of `now` (by hand: Retry now), each only if this call took it from the set; answers those moved. */
  requeueEntries(set: FailedSet, entries: FailedJob[], now: number, byHand: boolean): Promise<FailedJob[]>;
  /** Moves these retry set entries into the dead set as of `now`, each only if this call took it; answers those moved. */
  killEntries(entries: FailedJob[], now: number, keep: number): Promise<FailedJob[]>;
}

export function isEntryAddressed(b: JobBackend): b is JobBackend & EntryAddressed {
  return typeof (b as Partial<EntryAddressed>).removeEntries === 'function';
}

export function isShared(b: JobBackend): b is SharedJobBackend {
  return (b as Partial<SharedJobBackend>).shared === true;
}

/** A backend whose every step is done when the call returns (SQLite): the same methods, plain values. */
export type SyncJobBackend = {
  [K in keyof JobBackend]: JobBackend[K] extends (...args: infer A) => infer R ? (...args: A) => Awaited<R> : JobBackend[K];
};
