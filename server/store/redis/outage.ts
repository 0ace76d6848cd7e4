// What the job Redis being unreachable means to the rest of the server: its client errors become
// one sentence (the watched side's describeRedisError) inside a StorageError('unavailable'), which
// http/errors.ts answers as 503 with Retry-After; and an outage is logged once when it starts and
// once when it ends, as fields, never the client's error object (its references to the client and
// its command queue are what filled the log with `[Circular]`).
import { describeRedisError } from '../../sidekiq/errors.ts';
import { OUTCOME_UNKNOWN, StorageError } from '../ports/storage-error.ts';

/** How long a client should wait before trying again while the job Redis is away. */
export const OUTAGE_RETRY_AFTER_S = 5;

/** A deadline this module set itself (an answer that never came), worded without the watched side's flag. */
export class RedisNoAnswer extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/**
 * Replies from a Redis that is up but cannot serve this server now: loading, a replica, or refusing
 * its credentials (fixed in the URL, not by the request). An outage too, not a bug.
 */
const TRANSIENT_REPLY = /^(LOADING|MASTERDOWN|BUSY|TRYAGAIN|CLUSTERDOWN|READONLY|NOAUTH|WRONGPASS|NOPERM)\b/;

/**
 * Whether the error says Redis could not be reached or did not answer (so the call may succeed
 * later), as opposed to a reply Redis gave to this command (WRONGTYPE, a script error: a bug or
 * foreign data, not an outage).
 */
export function isRedisOutage(err: unknown): boolean {
  if (err instanceof StorageError) return err.kind === 'unavailable';
  if (err instanceof RedisNoAnswer) return true;
  const e = err as { name?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const msg = typeof e.message === 'string' ? e.message : '';
  if (e.name === 'ReplyError') return TRANSIENT_REPLY.test(msg);
  if (e.name === 'MaxRetriesPerRequestError') return true;
  return /Connection is closed|Stream isn't writeable|Command timed out|Socket closed|connect E|E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NETUNREACH)|ENOTFOUND|EAI_AGAIN/.test(msg);
}

type Log = { info(obj: unknown, msg?: string): void; warn(obj: unknown, msg?: string): void };

/**
 * The job Redis's reachability as this server sees it: down from the first failed call or lost
 * connection, up again at the next answer. Also the evidence orphan recovery needs (see
 * RedisJobBackend.recoverOrphans): since when Redis has answered without a break.
 */
export class RedisLink {
  /** The sentence of the current outage; undefined while Redis answers. */
  reason: string | undefined;
  private downSince = 0;
  /** When the last outage ended (epoch ms); 0 when this server has seen none. */
  upSince = 0;
  log: Log | undefined;

  constructor(
    readonly host: string,
    /** The client's command timeout (--redis-command-timeout-ms), named when a command runs out of it. */
    private readonly commandTimeoutMs = 0,
  ) {}

  /** The sentence for an error, in the job system's words (the watched side's name its own flags). */
  describe(err: unknown): string {
    if (err instanceof RedisNoAnswer) return this.noAnswer(err.ms);
    if (/Command timed out/.test(String((err as { message?: unknown } | null)?.message))) return `${this.noAnswer(this.commandTimeoutMs)} (raise --redis-command-timeout-ms if it is just slow)`;
    if (err instanceof StorageError) return err.message;
    return describeRedisError(err, this.host, 0);
  }

  private noAnswer(ms: number): string {
    return `no answer from Redis at ${this.host} within ${ms / 1000} s: is it overloaded or paused (SIGSTOP), or is a firewall dropping packets?`;
  }

  /**
   * An outage error as the StorageError every caller gets (503 + Retry-After); others unchanged.
   * `wrote`: the call changes Redis; unless the command was never sent (no connection: the client
   * refuses at once), the answer says the change may have been made.
   */
  translate(err: unknown, wrote = false): unknown {
    if (err instanceof StorageError || !isRedisOutage(err)) return err;
    const message = String((err as { message?: unknown }).message);
    // "Closed" and "not writeable" follow every refusal, lookup failure or reset: they would
    // replace its sentence with a vaguer one.
    const vague = /Connection is closed|Stream isn't writeable/.test(message);
    if (!vague || this.reason === undefined) this.down(this.describe(err));
    const unsent = /Stream isn't writeable|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(message);
    return this.unavailable(undefined, wrote && !unsent);
  }

  /** The StorageError of the current (or given) outage. */
  unavailable(reason = this.reason ?? `not connected to Redis at ${this.host}`, outcomeUnknown = false): StorageError {
    const unknown = outcomeUnknown ? `; ${OUTCOME_UNKNOWN}` : '';
    return new StorageError('unavailable', `the job system's Redis is unreachable (${reason})${unknown}; jobs are kept and run once it is back: try again in a few seconds`, OUTAGE_RETRY_AFTER_S);
  }

  down(reason: string): void {
    if (this.reason === undefined) {
      this.downSince = Date.now();
      this.log?.warn({ redis: this.host, reason }, 'job Redis unreachable: fetching paused, ends of running jobs kept until it is back');
    }
    this.reason = reason;
  }

  /** Redis answered, but late: counts as the end of an outage for recoverOrphans' rule, without a log line. */
  stalled(): void {
    this.upSince = Date.now();
  }

  /** Redis answered; answers whether this ends an outage. */
  up(): boolean {
    if (this.reason === undefined) return false;
    this.reason = undefined;
    this.upSince = Date.now();
    this.log?.info({ redis: this.host, downMs: this.upSince - this.downSince }, 'job Redis reachable again: fetching resumed, pending job ends recorded');
    return true;
  }
}
