// The job backend on Redis, in Sidekiq 6.4's layout (the spec's sidekiq-redis-layout.md), so
// Sidekiq's own API, a real Sidekiq and other Jobscope servers share one truth:
// - queues: SADD queues <name>, LPUSH queue:<name> <payload> (Sidekiq's client); Jobscope also keeps
//   the names it created in `jobscope:queues` (the queues Jobscope servers serve besides their
//   built-in ones, so a queue only a Sidekiq app serves is never taken from). A periodic job is
//   pushed by a script only while none of its kind waits in its queue (push-once.ts).
// - reliable fetch (as GitLab's reliable fetcher): LMOVE queue:<name> → working:<identity> in one
//   script over the served queues; a job's end removes it from the working list in the same script
//   as its result, idempotently and retried through outages (job-end.ts). A process whose
//   heartbeat hash has expired is dead: any server puts its working list back at the tail of the
//   jobs' queues (they run next), under the rule in recoverOrphans.
// - an outage (refused, closed, no answer) fails each call at once (no offline queue) as a
//   StorageError('unavailable') (outage.ts): 503 + Retry-After above; logged once each way.
// - retries: ZADD retry <at> <payload with error_message, error_class, failed_at, retry_count>;
//   Sidekiq's backoff is computed by the job runner (sidekiqRetryDelay); due retries are moved back
//   by a script (ZREM then LPUSH), so with several servers each moves a job once.
// - dead: ZADD dead <now>, trimmed to --job-dead-max and 6 months (Sidekiq's dead_max_jobs/timeout).
// - processes: SADD processes <identity>, HSET <identity> info busy beat quiet, EXPIRE ttl; in the
//   same MULTI, as Sidekiq's heartbeat: UNLINK <identity>:workers, HSET tid → {queue, payload, run_at}
//   per job running, EXPIRE ttl (Sidekiq's Busy page and Workers API).
// - counters: INCRBY stat:processed / stat:failed and the per-day keys (kept 5 years, as Sidekiq).
import crypto from 'node:crypto';
import os from 'node:os';
import type { Redis } from 'ioredis';
import type { EntryAddressed, NewJob, ProcessBeat, RecoveredJobs, SharedJobBackend, SharedQueue, SharedQueueDeletion } from '../../jobs/backend.ts';
import { scoreText, type EntryKey, type FailedSet } from '../../jobs/entry-key.ts';
import type { FailedJob, Job, JobCounters } from '../../jobs/types.ts';
import { jobscopeRetries, sidekiqRetryCount } from '../../jobs/types.ts';
import type { MetricsView } from '../../metrics/source.ts';
import { readSidekiq } from '../../sidekiq/read.ts';
import { boundedOptions, DEFAULT_CLIENT_BOUNDS, type ClientBounds } from '../../redis/bounded-client.ts';
import { viewOf } from '../../sidekiq/source.ts';
import { readQueue, readQueueList, readQueuePage, type QueueReadOptions } from './queue-reads.ts';
import { withJsonMembers } from '../../util/json-members.ts';
import { pushOnceArgs, pushUnlessPendingArgs } from './push-once.ts';
import { endArgs, type JobEnd } from './job-end.ts';
import { PendingEnds } from '../pending-ends.ts';
import { defineScripts, JOB_SCRIPTS } from '../../redis/lua-scripts.ts';
import { isRedisOutage, RedisLink, RedisNoAnswer } from './outage.ts';
import { redisHost } from '../../sidekiq/redis-url.ts';

const SIX_MONTHS_S = 180 * 24 * 3600;
const FIVE_YEARS_S = 5 * 365 * 24 * 3600;

/** A Redis job's number (the first 48 bits of its jid): shown, and accepted where it names one entry; entries are named by key (entry-key.ts). */
export function idOfJid(jid: string): number {
  const n = parseInt(jid.slice(0, 12), 16);
  return Number.isFinite(n) ? n : 0;
}

const newJid = () => crypto.randomBytes(12).toString('hex');
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Payload {
  class?: unknown;
  args?: unknown;
  jid?: unknown;
  queue?: unknown;
  retry?: unknown;
  created_at?: unknown;
  enqueued_at?: unknown;
  jobscope_kind?: unknown;
  error_message?: unknown;
  error_class?: unknown;
  failed_at?: unknown;
  retried_at?: unknown;
  retry_count?: unknown;
  [k: string]: unknown;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Sidekiq's SortedEntry#retry: `msg["retry_count"] -= 1 if msg["retry_count"]` (0 becomes -1; absent stays absent). */
function retriedByHandCount(raw: string): { retry_count?: number } {
  const count = num((JSON.parse(raw) as Payload).retry_count);
  return count === null ? {} : { retry_count: count - 1 };
}

/** What a job kind is, from the payload: Jobscope's own tag, else the kind registered for its class. */
export type KindOfClass = (cls: string) => string | undefined;

type Scripted = Redis & {
  jsFetch(numKeys: number, ...keysAndArgs: string[]): Promise<string[]>;
  jsRequeue(setKey: string, queueKey: string, queuesKey: string, member: string, payload: string, queue: string): Promise<number>;
  jsOrphans(workingKey: string, workingSet: string, identity: string, when: 'if-dead' | 'always'): Promise<number>;
  jsEnd(working: string, ...args: string[]): Promise<number>;
  jsKillEntry(set: string, dead: string, member: string, now: string, oldest: string, max: string): Promise<number>;
  jsReturnStrays(working: string, ...held: string[]): Promise<number>;
  jsForgetEmpty(queuesKey: string, queueKey: string, queue: string): Promise<number>;
  jsPushOnce(...keysAndArgs: string[]): Promise<number>;
  jsPushUnlessPending(...keysAndArgs: string[]): Promise<number>;
};

export interface RedisJobBackendOptions {
  url: string;
  processTtlS: number;
  /** Heartbeat period, ms; 0 or absent = Sidekiq's (5 s, or TTL/3 if shorter). Capped at TTL/3 so a
   *  live process's hash never expires between two beats. */
  beatEveryMs?: number;
  /** The job system's clock. */
  now: () => number;
  kindOf: KindOfClass;
  maxQueuesRead: number;
  /** --job-dead-max: the dead set's trim when a payload that is no job is buried (default Sidekiq's 10,000). */
  deadMax?: number;
  /** Command timeout and reply bounds of the client (server/redis/bounded-client.ts). */
  bounds?: ClientBounds;
  /** Longest wait for an answer before a call fails as an outage (a frozen Redis), ms; default 5000. */
  answerMs?: number;
  /** Where the outage's start and end are logged (once each), and a payload that is no job (once, as it goes to the dead set). */
  log?: { info(obj: unknown, msg?: string): void; warn(obj: unknown, msg?: string): void };
  /** ioredis's client class. Given by the caller so that ioredis is loaded only with --redis
   *  (openRedisJobBackend): loading it costs every server ~20 MiB of RSS at idle. */
  Redis: typeof Redis;
}

/** The adapter with ioredis loaded on demand (what `serve --redis` uses). */
export async function openRedisJobBackend(opts: Omit<RedisJobBackendOptions, 'Redis'>): Promise<RedisJobBackend> {
  const { Redis } = await import('ioredis');
  return new RedisJobBackend({ ...opts, Redis });
}

// During an outage a call fails at once instead of waiting in an unbounded offline queue, and a
// command whose connection dropped is not sent again by the client after the reconnect: a push or a
// fetch may already have been done, and only the caller knows whether repeating it is safe (a job's
// end is: job-end.ts).
const FAIL_FAST = { enableOfflineQueue: false, autoResendUnfulfilledCommands: false } as const;

/** The calls that talk to Redis: each failure for an outage reaches the caller as a StorageError. */
const GUARDED = [
  'recover', 'addQueue', 'deleteQueues', 'push', 'pushUnlessWaiting', 'pushUnlessPending', 'requeue', 'addCounters', 'dead', 'deadSize', 'deleteFailed', 'clearRetries',
  'deadByIds', 'clearDead', 'fetch', 'moveDue', 'recoverOrphans', 'beat', 'retries', 'servedQueues', 'queueList', 'queueInfo', 'queuePage', 'queueSize',
  'deleteSharedQueue', 'read', 'entries', 'removeEntries', 'requeueEntries', 'killEntries', 'killRetries',
] as const;

/** The guarded calls that change what a client asked for: a lost answer leaves their outcome unknown. */
const WRITES = new Set<string>(['addQueue', 'deleteQueues', 'push', 'pushUnlessWaiting', 'pushUnlessPending', 'requeue', 'deleteFailed', 'clearRetries', 'clearDead', 'deleteSharedQueue', 'removeEntries', 'requeueEntries', 'killEntries', 'killRetries']);

export class RedisJobBackend implements SharedJobBackend, EntryAddressed {
  readonly shared = true as const;
  readonly identity = `${os.hostname()}:${process.pid}:${crypto.randomBytes(6).toString('hex')}`;
  readonly beatEveryMs: number;
  /** Whether Redis answers, and the sentence when not (the job system's status reads it). */
  readonly link: RedisLink;
  private readonly redis: Scripted;
  private readonly working: string;
  private readonly ends: PendingEnds<JobEnd>;
  private readonly answerMs: number;
  /** Entries fetched into the working list and not yet ended: what return-strays.lua keeps. */
  private readonly held = new Map<string, number>();
  /**
   * Fetches that failed (Redis may have moved jobs this process never received), and how many of
   * those a return-strays.lua run has covered. Counts, not a flag: a fetch abandoned at its deadline goes on
   * and must not clear a mark made after it started.
   */
  private strayMarks = 0;
  private straysReturned = 0;
  private lastBeat: ProcessBeat | undefined;
  private leaving = false;
  /** Calls in flight, with when each was made: failed at a close (see its listener) or past answerMs. */
  private readonly inFlight = new Map<(err: Error) => void, number>();
  private deadlineTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: RedisJobBackendOptions) {
    const most = Math.floor((opts.processTtlS * 1000) / 3);
    this.beatEveryMs = opts.beatEveryMs ? Math.min(opts.beatEveryMs, most) : Math.min(5000, most);
    this.answerMs = opts.answerMs ?? 5000;
    this.link = new RedisLink(redisHost(opts.url), (opts.bounds ?? DEFAULT_CLIENT_BOUNDS).commandTimeoutMs);
    this.link.log = opts.log;
    const redis = new opts.Redis(opts.url, boundedOptions(opts.bounds ?? DEFAULT_CLIENT_BOUNDS, { ...FAIL_FAST, lazyConnect: true, connectionName: 'jobscope-jobs', maxRetriesPerRequest: 3 }));
    // Without a listener ioredis prints each connection error as "Unhandled error event"; the
    // link logs the outage once instead.
    redis.on('error', (err: unknown) => void this.link.translate(err));
    redis.on('ready', () => this.reconnected());
    // A command in flight when the connection drops is neither answered nor sent again (FAIL_FAST):
    // ioredis would leave its promise pending for ever, so the calls waiting on one fail now.
    // A dropped connection is an outage even when the reconnect succeeds at its first try: hashes
    // may have expired meanwhile (a restarted Redis), which recoverOrphans must know.
    redis.on('close', () => {
      if (!this.leaving) this.link.translate(new Error('Connection is closed.'));
      for (const cut of [...this.inFlight.keys()]) cut(new Error('Connection is closed.'));
    });
    defineScripts(redis, JOB_SCRIPTS);
    this.redis = redis as Scripted;
    this.working = `working:${this.identity}`;
    this.ends = new PendingEnds<JobEnd>({
      write: (batch) => this.answered(this.redis.jsEnd(this.working, ...endArgs([day(this.opts.now()), String(FIVE_YEARS_S), String(this.opts.now() / 1000 - SIX_MONTHS_S)], batch))),
      isOutage: isRedisOutage,
    });
    this.guard();
  }

  /**
   * Wraps each Redis-facing method once, here rather than in each body (they read as Sidekiq's
   * operations): an answer ends an outage, an outage error becomes the link's StorageError, and no
   * call waits longer than answerMs (a frozen Redis keeps the socket open and answers nothing).
   */
  private guard(): void {
    const self = this as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    for (const name of GUARDED) {
      const call = self[name]!.bind(this);
      self[name] = (...a: unknown[]) => this.answered(call(...a), name === 'fetch', WRITES.has(name));
    }
  }

  private answered<T>(p: Promise<T>, fetching = false, writes = false): Promise<T> {
    let cut: ((err: Error) => void) | undefined;
    const deadline = new Promise<never>((_, reject) => {
      cut = reject;
    });
    this.inFlight.set(cut!, Date.now());
    this.watchDeadlines();
    const settled = () => this.inFlight.delete(cut!);
    return Promise.race([p, deadline]).then(
      (v) => {
        settled();
        this.link.up();
        // Held once the caller has them: jobs of a fetch given up on are strays, not held.
        if (fetching) for (const job of v as Job[]) this.held.set(job.raw ?? '', (this.held.get(job.raw ?? '') ?? 0) + 1);
        return v;
      },
      (err: unknown) => {
        settled();
        // The script may still run (or have run) without this process seeing its jobs.
        if (fetching) this.strayMarks++;
        p.catch(() => undefined);
        throw this.link.translate(err, writes);
      },
    );
  }

  // One timer for every call in flight rather than one per call: thousands of calls a second
  // would otherwise each arm and clear their own. A call fails between answerMs and 1.25 × answerMs.
  private watchDeadlines(): void {
    if (this.deadlineTimer) return;
    this.deadlineTimer = setInterval(() => {
      const late = Date.now() - this.answerMs;
      for (const [cut, at] of this.inFlight) if (at <= late) cut(new RedisNoAnswer(this.answerMs));
      if (this.inFlight.size === 0) {
        clearInterval(this.deadlineTimer);
        this.deadlineTimer = undefined;
      }
    }, Math.max(10, this.answerMs / 4));
    this.deadlineTimer.unref();
  }

  /**
   * The connection is ready again. If this ends an outage, this process's heartbeat is written
   * first of all (its hash may have expired meanwhile: see recoverOrphans), then its pending ends.
   */
  private reconnected(): void {
    if (!this.link.up()) return;
    const beat = this.lastBeat;
    void (beat ? this.beat(beat) : Promise.resolve()).then(
      () => this.ends.retryNow(),
      () => this.ends.retryNow(),
    );
  }

  // ---- payloads ------------------------------------------------------------------------------

  private payload(job: Job | NewJob, jid: string, extra: Record<string, unknown> = {}): string {
    return JSON.stringify({
      class: job.class,
      args: [job.args],
      retry: job.retry,
      queue: job.queue,
      jid,
      created_at: job.created_at / 1000,
      enqueued_at: job.enqueued_at / 1000,
      jobscope_kind: job.kind,
      ...extra,
    });
  }

  private failedPayload(job: FailedJob, set: 'retry' | 'dead'): string {
    const jid = job.jid ?? newJid();
    const colon = job.error?.indexOf(': ') ?? -1;
    const errorClass = job.error && colon > 0 ? job.error.slice(0, colon) : 'StandardError';
    const errorMessage = job.error && colon > 0 ? job.error.slice(colon + 2) : (job.error ?? '');
    const failedAt = (job.first_failed_at ?? job.failed_at ?? this.opts.now()) / 1000;
    const extra: Record<string, unknown> = {
      error_message: errorMessage,
      error_class: errorClass,
      failed_at: failedAt,
      retry_count: sidekiqRetryCount(job.retry_count, set),
    };
    if (job.retry_count > 1 || (job.first_failed_at !== undefined && job.failed_at !== null)) extra.retried_at = (job.failed_at ?? this.opts.now()) / 1000;
    // The payload as fetched, its other members byte for byte, as Sidekiq re-dumps the hash it loaded:
    // an app's args (any array, any depth) survive the failure, where re-serializing would lose them.
    return (job.raw && withJsonMembers(job.raw, extra)) || this.payload(job, jid, extra);
  }

  /** A stored payload as a job; `score` (epoch s) is its score in the retry or dead set. */
  parse(raw: string, score: number | null = null, inDead = false): FailedJob | null {
    let p: Payload;
    try {
      p = JSON.parse(raw) as Payload;
    } catch {
      return null;
    }
    if (!p || typeof p !== 'object' || typeof p.class !== 'string') return null;
    const jid = typeof p.jid === 'string' ? p.jid : '';
    const args = Array.isArray(p.args) && p.args.length > 0 && p.args[0] !== null && typeof p.args[0] === 'object' && !Array.isArray(p.args[0]) ? (p.args[0] as Record<string, unknown>) : {};
    const kind = typeof p.jobscope_kind === 'string' ? p.jobscope_kind : (this.opts.kindOf(p.class) ?? p.class);
    const retry = p.retry === false ? false : p.retry === true || p.retry === undefined ? 25 : (num(p.retry) ?? 25);
    const failedAt = num(p.failed_at);
    const retriedAt = num(p.retried_at);
    const sidekiqCount = num(p.retry_count);
    const error = typeof p.error_class === 'string' ? `${p.error_class}: ${typeof p.error_message === 'string' ? p.error_message : ''}` : null;
    return {
      id: idOfJid(jid),
      jid,
      raw,
      queue: typeof p.queue === 'string' ? p.queue : 'default',
      class: p.class,
      kind,
      args,
      retry: typeof retry === 'number' ? Math.max(0, Math.floor(retry)) : retry,
      retry_count: jobscopeRetries(sidekiqCount, inDead ? 'dead' : 'retry'),
      created_at: (num(p.created_at) ?? num(p.enqueued_at) ?? 0) * 1000,
      enqueued_at: (num(p.enqueued_at) ?? 0) * 1000,
      run_at: score === null || inDead ? null : score * 1000,
      failed_at: retriedAt !== null ? retriedAt * 1000 : failedAt !== null ? failedAt * 1000 : null,
      first_failed_at: failedAt !== null ? failedAt * 1000 : undefined,
      error,
      ...(score === null ? {} : { score }),
    };
  }

  /** A set's member as an entry: its job, or (not a job) the raw text, so it is listed and can be deleted. */
  private entry(raw: string, score: number, inDead: boolean): FailedJob {
    return (
      this.parse(raw, score, inDead) ?? {
        id: 0, jid: '', raw, queue: '', class: '?', kind: '?', args: {}, retry: false, retry_count: 0, created_at: 0, enqueued_at: 0,
        run_at: null, failed_at: null, error: null, score, unreadable: true,
      }
    );
  }

  private entriesOf(flat: string[], inDead: boolean): FailedJob[] {
    const out: FailedJob[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push(this.entry(flat[i]!, Number(flat[i + 1]), inDead));
    return out;
  }

  private counters(m: ReturnType<Redis['multi']>, c: JobCounters): void {
    const today = day(this.opts.now());
    for (const [name, n] of [
      ['processed', c.processed],
      ['failed', c.failed],
    ] as const) {
      if (n === 0) continue;
      m.incrby(`stat:${name}`, n).incrby(`stat:${name}:${today}`, n).expire(`stat:${name}:${today}`, FIVE_YEARS_S);
    }
  }

  private async exec(m: ReturnType<Redis['multi']>): Promise<unknown[]> {
    const res = await m.exec();
    if (!res) throw new Error('Redis MULTI was aborted');
    for (const [err] of res) if (err) throw err;
    return res.map(([, v]) => v);
  }

  /** A fetched job's end: out of the working list with its result, once, whatever outages come (job-end.ts). */
  private end(job: Job, counters: JobCounters, set?: JobEnd['set']): Promise<void> {
    const raw = job.raw ?? '';
    return this.ends.end({ raw, counters, set }).then(() => {
      const n = (this.held.get(raw) ?? 0) - 1;
      if (n > 0) this.held.set(raw, n);
      else this.held.delete(raw);
    });
  }

  // ---- JobBackend ----------------------------------------------------------------------------

  /** Connects (at most answerMs), then loads; an outage is a StorageError, and the caller tries again later. */
  async recover(): Promise<RecoveredJobs> {
    await this.connected();
    await this.recoverOrphans();
    const [processed, failed, queues] = await this.exec(this.redis.multi().get('stat:processed').get('stat:failed').smembers('jobscope:queues'));
    return {
      queues: (queues as string[]).sort(),
      waiting: [],
      retries: [],
      counters: { processed: Number(processed ?? 0) || 0, failed: Number(failed ?? 0) || 0 },
    };
  }

  private async connected(): Promise<void> {
    if (this.redis.status === 'ready') return;
    const status = this.redis.status;
    const ready = new Promise<void>((resolve, reject) => {
      const onReady = () => (clearTimeout(timer), resolve());
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        // A server that accepted the connection and never answered its ready check: start over.
        const silent = this.redis.status === 'connect' || this.link.reason === undefined;
        if (this.redis.status === 'connect') this.redis.disconnect(true);
        reject(silent ? this.link.translate(new RedisNoAnswer(this.answerMs)) : this.link.unavailable());
      }, this.answerMs);
      this.redis.once('ready', onReady);
    });
    // connect() rejects on the first refusal while the client keeps retrying on its own: the ready
    // event (or the deadline) is the answer either way.
    if (status === 'wait' || status === 'end') this.redis.connect().catch(() => undefined);
    await ready;
  }

  async addQueue(name: string): Promise<void> {
    await this.exec(this.redis.multi().sadd('queues', name).sadd('jobscope:queues', name));
  }

  async deleteQueues(names: string[]): Promise<number> {
    let dropped = 0;
    const retries = await this.redis.zrange('retry', '0', '-1');
    for (const name of names) {
      const m = this.redis.multi().llen(`queue:${name}`).del(`queue:${name}`).srem('queues', name).srem('jobscope:queues', name);
      for (const raw of retries) if (this.parse(raw)?.queue === name) m.zrem('retry', raw);
      const res = await this.exec(m);
      dropped += Number(res[0]) + res.slice(4).reduce<number>((a, v) => a + Number(v), 0);
    }
    return dropped;
  }

  async push(jobs: NewJob[]): Promise<Job[]> {
    const out: Job[] = [];
    const m = this.redis.multi();
    const queues = new Set<string>();
    for (const job of jobs) {
      const jid = newJid();
      const raw = this.payload(job, jid);
      queues.add(job.queue);
      m.lpush(`queue:${job.queue}`, raw);
      out.push({ ...job, id: idOfJid(jid), jid, raw });
    }
    for (const q of queues) m.sadd('queues', q).sadd('jobscope:queues', q);
    await this.exec(m);
    return out;
  }

  /** SharedJobBackend's: one script (push-once.ts): the check and the push cannot interleave with another server's. */
  async pushUnlessWaiting(job: NewJob): Promise<Job | null> {
    const jid = newJid();
    const raw = this.payload(job, jid);
    const classMakesKind = (this.opts.kindOf(job.class) ?? job.class) === job.kind;
    const pushed = await this.redis.jsPushOnce(...pushOnceArgs(job.queue, job.kind, job.class, classMakesKind, raw));
    return pushed === 1 ? { ...job, id: idOfJid(jid), jid, raw } : null;
  }

  async pushUnlessPending(job: NewJob): Promise<Job | null> {
    const jid = newJid();
    const raw = this.payload(job, jid);
    const classMakesKind = (this.opts.kindOf(job.class) ?? job.class) === job.kind;
    const pushed = await this.redis.jsPushUnlessPending(...pushUnlessPendingArgs(job.queue, job.kind, job.class, classMakesKind, job.args, raw));
    return pushed === 1 ? { ...job, id: idOfJid(jid), jid, raw } : null;
  }

  claim(): void {
    // fetch() already moved the job into this process's working list.
  }

  ack(job: Job, counters: JobCounters): Promise<void> {
    return this.end(job, counters);
  }

  retryLater(job: FailedJob, counters: JobCounters): Promise<void> {
    return this.end(job, counters, { key: 'retry', score: (job.run_at ?? this.opts.now()) / 1000, payload: this.failedPayload(job, 'retry'), keep: 0 });
  }

  kill(job: FailedJob, counters: JobCounters, keep: number): Promise<void> {
    return this.end(job, counters, { key: 'dead', score: this.opts.now() / 1000, payload: this.failedPayload(job, 'dead'), keep });
  }

  /** Moves these members of `set` back into their queues as of `now`; returns the jobs this call moved. */
  private async requeueMembers(set: FailedSet, members: string[], now: number): Promise<FailedJob[]> {
    const jobs = members.map((raw) => this.parse(raw)).filter((j): j is FailedJob => j !== null);
    return this.requeueEntries(set, jobs, now, false);
  }

  /** Entries that are no job are never moved into a queue (a worker could not run them). */
  async requeueEntries(set: FailedSet, entries: FailedJob[], now: number, byHand: boolean): Promise<FailedJob[]> {
    const moved: FailedJob[] = [];
    for (const job of entries) {
      if (job.unreadable || !job.raw) continue;
      const again = withJsonMembers(job.raw, { enqueued_at: now / 1000, ...(byHand ? retriedByHandCount(job.raw) : {}) });
      if (again && (await this.redis.jsRequeue(set, `queue:${job.queue}`, 'queues', job.raw, again, job.queue)) === 1) moved.push(job);
    }
    return moved;
  }

  /** Sidekiq Web's Kill: each entry leaves the retry set for the dead set only if this call took it. */
  async killEntries(entries: FailedJob[], now: number, keep: number): Promise<FailedJob[]> {
    const killed: FailedJob[] = [];
    // The script trims as Sidekiq does (ZREMRANGEBYRANK 0 -max): keep + 1 leaves `keep`, as end.lua does.
    const trim: [string, string, string] = [String(now / 1000), String(now / 1000 - SIX_MONTHS_S), String(keep + 1)];
    for (const job of entries) {
      if (job.raw && (await this.redis.jsKillEntry('retry', 'dead', job.raw, ...trim)) === 1) killed.push(job);
    }
    return killed;
  }

  async killRetries(ids: number[], now: number, keep: number): Promise<number[]> {
    const want = new Set(ids);
    return (await this.killEntries((await this.entries('retry', undefined)).filter((j) => want.has(j.id)), now, keep)).map((j) => j.id);
  }

  async removeEntries(set: FailedSet, entries: FailedJob[]): Promise<FailedJob[]> {
    if (entries.length === 0) return [];
    const m = this.redis.multi();
    for (const e of entries) m.zrem(set, e.raw ?? '');
    const removed = await this.exec(m);
    return entries.filter((_, i) => Number(removed[i]) === 1);
  }

  /**
   * As Sidekiq Web's JobSet#fetch(score, jid): ZRANGEBYSCORE score score, then the jid compared; an
   * old numeric id is looked for in the whole set (it may name several entries: the caller decides).
   */
  async entries(set: FailedSet, keys: EntryKey[] | undefined): Promise<FailedJob[]> {
    const inDead = set === 'dead';
    if (!keys || keys.some((k) => 'id' in k)) return this.entriesOf(await this.redis.zrange(set, '0', '-1', 'WITHSCORES'), inDead);
    const scores = [...new Set(keys.map((k) => ('score' in k ? k.score : 0)))];
    const p = this.redis.pipeline();
    for (const sc of scores) p.zrangebyscore(set, scoreText(sc), scoreText(sc), 'WITHSCORES');
    const res = (await p.exec()) ?? [];
    return res.flatMap(([err, flat]) => {
      if (err) throw err;
      return this.entriesOf(flat as string[], inDead);
    });
  }

  async requeue(ids: number[], now: number, byHand = false): Promise<void> {
    const want = new Set(ids);
    for (const set of ['retry', 'dead'] as const) {
      await this.requeueEntries(set, (await this.entries(set, undefined)).filter((j) => want.has(j.id)), now, byHand);
    }
  }

  async addCounters(counters: JobCounters): Promise<void> {
    const m = this.redis.multi();
    this.counters(m, counters);
    await this.exec(m);
  }

  async dead(limit: number, offset = 0): Promise<FailedJob[]> {
    return this.entriesOf(await this.redis.zrevrange('dead', offset, offset + limit - 1, 'WITHSCORES'), true);
  }

  deadSize(): Promise<number> {
    return this.redis.zcard('dead');
  }

  async deleteFailed(ids: number[], set: FailedSet): Promise<number[]> {
    const want = new Set(ids);
    return (await this.removeEntries(set, (await this.entries(set, undefined)).filter((j) => want.has(j.id)))).map((j) => j.id);
  }

  async clearRetries(): Promise<number> {
    const [n] = await this.exec(this.redis.multi().zcard('retry').del('retry'));
    return Number(n);
  }

  async deadByIds(ids: number[] | undefined): Promise<FailedJob[]> {
    const want = ids ? new Set(ids) : undefined;
    return (await this.entries('dead', undefined)).filter((j) => !j.unreadable && (!want || want.has(j.id)));
  }

  async clearDead(): Promise<number> {
    const [n] = await this.exec(this.redis.multi().zcard('dead').del('dead'));
    return Number(n);
  }

  // ---- SharedJobBackend ----------------------------------------------------------------------

  async fetch(queues: string[], max: number): Promise<Job[]> {
    if (queues.length === 0 || max < 1) return [];
    const marks = this.strayMarks;
    if (marks > this.straysReturned) {
      // Sent on the same connection before this fetch, so after any lost one: its jobs go back.
      const held = [...this.held].flatMap(([raw, n]) => Array<string>(n).fill(raw));
      await this.redis.jsReturnStrays(this.working, ...held);
      this.straysReturned = Math.max(this.straysReturned, marks);
    }
    const raws = await this.redis.jsFetch(queues.length + 1, this.working, ...queues.map((q) => `queue:${q}`), String(max));
    const jobs: Job[] = [];
    const junk: string[] = [];
    for (const raw of raws) {
      const job = this.parse(raw);
      if (job) jobs.push(job);
      else junk.push(raw);
    }
    if (junk.length > 0) await this.bury(junk);
    return jobs;
  }

  /**
   * Payloads that are no job (not JSON, or no object with a class) go to the dead set as Sidekiq's
   * Processor sends invalid JSON (DeadSet#kill: ZADD dead now, trimmed; no counter), in one MULTI
   * with their LREM from the working list, and are logged once each ("Invalid JSON for job").
   */
  private async bury(junk: string[]): Promise<void> {
    const now = this.opts.now() / 1000;
    const m = this.redis.multi();
    for (const raw of junk) m.lrem(this.working, 1, raw).zadd('dead', String(now), raw);
    m.zremrangebyscore('dead', '-inf', String(now - SIX_MONTHS_S)).zremrangebyrank('dead', 0, -((this.opts.deadMax ?? 10_000) + 1));
    await this.exec(m);
    for (const raw of junk) this.opts.log?.warn({ context: 'Invalid JSON for job', jobstr: raw.length > 1000 ? `${raw.slice(0, 1000)}…` : raw }, 'a queued payload is no job: moved to the dead set');
  }

  async moveDue(now: number): Promise<number> {
    const due = await this.redis.zrangebyscore('retry', '-inf', String(now / 1000), 'LIMIT', 0, 100);
    return (await this.requeueMembers('retry', due, now)).length;
  }

  /**
   * The rule for taking another process's working list: its heartbeat hash is missing (checked in
   * the same script as the move), AND this server has had Redis answering without a break for a
   * full TTL (since its start, or since its last outage ended). An outage, a Redis restart or a
   * freeze lets hashes expire while their processes live and still run those jobs; every live
   * process re-asserts its hash first thing when its connection is ready again (reconnected()),
   * and beats every TTL/3, so a hash still missing a TTL after the outage is a dead process's.
   * A network split that cuts off only the owner for longer than the TTL is beyond this rule: its
   * jobs run again elsewhere, and its own late ends then find no entry and count nothing.
   */
  async recoverOrphans(): Promise<number> {
    if (this.link.reason !== undefined) return 0;
    if (this.link.upSince > 0 && Date.now() - this.link.upSince < this.opts.processTtlS * 1000) return 0;
    const owners = await this.redis.smembers('jobscope:working');
    let n = 0;
    for (const identity of owners) {
      if (identity === this.identity) continue;
      if ((await this.redis.exists(identity)) === 1) continue;
      n += await this.redis.jsOrphans(`working:${identity}`, 'jobscope:working', identity, 'if-dead');
    }
    return n;
  }

  private get workersKey(): string {
    return `${this.identity}:workers`;
  }

  async beat(p: ProcessBeat): Promise<void> {
    this.lastBeat = p;
    const info = {
      hostname: p.hostname,
      started_at: p.startedAt / 1000,
      pid: p.pid,
      tag: p.tag,
      concurrency: p.concurrency,
      queues: [...new Set(p.queues)],
      labels: p.labels,
      identity: this.identity,
    };
    const m = this.redis.multi().sadd('processes', this.identity).sadd('jobscope:working', this.identity).unlink(this.workersKey);
    // Sidekiq 6.4 (Processor#stats): payload is the job's JSON string as fetched, run_at whole seconds.
    const workers = Object.fromEntries(p.work.map((w) => [w.tid, JSON.stringify({ queue: w.queue, payload: w.payload, run_at: Math.floor(w.runAt / 1000) })]));
    if (p.work.length > 0) m.hset(this.workersKey, workers);
    m.expire(this.workersKey, this.opts.processTtlS)
      .hset(this.identity, 'info', JSON.stringify(info), 'busy', String(p.work.length), 'beat', String(Date.now() / 1000), 'quiet', 'false', 'rss', String(Math.round(process.memoryUsage.rss() / 1024)))
      .expire(this.identity, this.opts.processTtlS);
    const at = Date.now();
    await this.exec(m);
    // A beat answered later than a beat period: Redis (or this process) stalled, and hashes may
    // have expired meanwhile without any call failing; recoverOrphans waits as after an outage.
    if (Date.now() - at > this.beatEveryMs) this.link.stalled();
  }

  retries(): Promise<FailedJob[]> {
    return this.entries('retry', undefined);
  }

  servedQueues(): Promise<string[]> {
    return this.redis.smembers('jobscope:queues');
  }

  // ---- the control API's queue views (queue-reads.ts) -------------------------------------

  private get reads(): QueueReadOptions {
    return { maxQueues: this.opts.maxQueuesRead, maxProcesses: 100_000, self: this.identity, now: this.opts.now };
  }

  queueList(): Promise<{ queues: SharedQueue[]; total: number }> {
    return readQueueList(this.redis, this.reads);
  }

  queueInfo(name: string): Promise<SharedQueue | null> {
    return readQueue(this.redis, name, this.reads);
  }

  async queuePage(name: string, offset: number, limit: number): Promise<{ total: number; jobs: Job[] } | null> {
    const page = await readQueuePage(this.redis, name, offset, limit);
    return page && { total: page.total, jobs: page.entries.map((raw) => this.queuedJob(raw, name)) };
  }

  /** A queue's entry as a job (in the list's queue, as Sidekiq's JobRecord); one that is no job keeps its row, so rows and X-Total agree. */
  private queuedJob(raw: string, queue: string): Job {
    const job = this.parse(raw);
    if (job) return { ...job, queue };
    return { id: 0, queue, class: '?', kind: '?', args: {}, retry: false, retry_count: 0, created_at: 0, enqueued_at: 0, raw };
  }

  queueSize(name: string): Promise<number> {
    return this.redis.llen(`queue:${name}`);
  }

  /**
   * Sidekiq Web's Delete (Queue#clear) UNLINKs the list and SREMs the name, whatever it holds. That
   * is what a queue Jobscope created gets (its retries go too, as on SQLite): its jobs are synthetic.
   * A queue Jobscope did not create is a Sidekiq app's: its jobs are real work, and a simulator's UI
   * must not drop them, so it is only forgotten while empty (the app's next push lists it again);
   * with jobs it is refused, and Sidekiq Web remains the place to clear it.
   */
  async deleteSharedQueue(name: string): Promise<SharedQueueDeletion> {
    if ((await this.redis.sismember('jobscope:queues', name)) === 1) return { dropped: await this.deleteQueues([name]) };
    const n = await this.redis.jsForgetEmpty('queues', `queue:${name}`, name);
    return n > 0 ? { heldByApp: n } : n < 0 ? { dropped: 0 } : undefined;
  }

  async read(): Promise<MetricsView> {
    return viewOf(await readSidekiq(this.redis, '', { maxQueues: this.opts.maxQueuesRead, maxProcesses: 100_000, days: 1 }, this.opts.now));
  }

  reachability(): { where: string; reason?: string } {
    return { where: this.link.host, reason: this.link.reason };
  }

  useLog(log: NonNullable<RedisJobBackendOptions['log']>): void {
    this.link.log = log;
  }

  async leave(): Promise<void> {
    try {
      // Ends still pending (Redis came back late in the stop) are written before the working list
      // is emptied: otherwise finished jobs would go back to their queues and run twice.
      const until = Date.now() + this.answerMs;
      this.ends.retryNow();
      while (this.ends.pending > 0 && this.link.reason === undefined && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      this.ends.close('the job backend left before Redis came back; the job stays in its working list');
      this.leaving = true;
      // Jobs cut off by the stop go back to the tails of their queues at once (they run next).
      await this.answered(this.redis.jsOrphans(this.working, 'jobscope:working', this.identity, 'always'));
      await this.answered(this.exec(this.redis.multi().srem('processes', this.identity).del(this.identity).unlink(this.workersKey)));
    } catch (err) {
      throw this.link.translate(err);
    } finally {
      this.redis.disconnect();
    }
  }
}
