// What a job list shows of one job, whatever keeps it: the embedded job system's views map into
// this shape here, and a peek into another Sidekiq (a read-only connection) can map its own. The
// list components take only these rows, so they know nothing of where the jobs come from.
import type { FailedJobView, QueuedJobView } from '../../../contract/jobs.ts';
import type { PeekJob } from '../../../contract/sidekiq.ts';
import { jobHref } from '../../api/job-detail.ts';
import { dateTime } from '../format.ts';

export interface JobRow {
  /** Unique in the list; what a selection holds (a retry or dead entry's key, Sidekiq's jid, or our job id as text). */
  key: string;
  class: string;
  /** Any JSON value; a string is taken as arguments already written out (a peek's, cut by the server). */
  args: unknown;
  queue?: string;
  enqueuedAt?: string | null;
  failedAt?: string | null;
  /** The first failure, where it is known apart from `failedAt`. */
  firstFailedAt?: string | null;
  errorClass?: string | null;
  errorMessage?: string | null;
  retryCount?: number;
  nextRetryAt?: string | null;
  /** Scheduled set: when it runs (the set's score). */
  runAt?: string | null;
  /** Dead set: when it died (the set's score). */
  diedAt?: string | null;
  /** Its job page, where the list can name the job. */
  href?: string;
  /** What the action routes name it by, when that is not `key`: a peeked set entry's `<score>-<jid>`. */
  actionKey?: string | null;
}

export type JobColumn = 'id' | 'class' | 'args' | 'queue' | 'enqueued' | 'failed' | 'error' | 'retries' | 'next_retry' | 'died' | 'runs_at';

// The dead set is ordered by death: its time column is the death, the first failure (or, where only that is kept, the last) in its tooltip.
export const RETRY_COLUMNS: JobColumn[] = ['class', 'args', 'queue', 'error', 'failed', 'retries', 'next_retry'];
export const DEAD_COLUMNS: JobColumn[] = ['class', 'args', 'queue', 'error', 'died', 'retries'];
export const SCHEDULED_COLUMNS: JobColumn[] = ['runs_at', 'class', 'args', 'queue'];

export const ARGS_MAX = 120;

/** The args as one line of JSON, cut to `max` characters (the whole text goes in a tooltip). */
export function argsText(args: unknown, max = ARGS_MAX): { short: string; full: string } {
  let full: string;
  try {
    full = typeof args === 'string' ? args : (JSON.stringify(args) ?? String(args));
  } catch {
    full = String(args);
  }
  return { short: full.length > max ? `${full.slice(0, max - 1)}…` : full, full };
}

export const fromQueued = (j: QueuedJobView): JobRow => ({
  key: String(j.id),
  class: j.class,
  args: j.args_raw ?? j.args,
  queue: j.queue,
  enqueuedAt: j.enqueued_at,
  retryCount: j.retry_count ?? undefined,
  href: jobHref({ queue: j.queue, jid: String(j.id) }),
});

export const fromFailed = (j: FailedJobView): JobRow => ({
  key: j.key,
  class: j.class,
  // Too deep to answer as JSON, or no job at all: the stored text, shown as written.
  args: j.args_raw ?? j.args,
  queue: j.queue,
  enqueuedAt: j.enqueued_at,
  failedAt: j.failed_at,
  firstFailedAt: j.first_failed_at,
  errorClass: j.error_class,
  errorMessage: j.error_message ?? j.error,
  retryCount: j.retry_count,
  nextRetryAt: j.run_at,
  href: jobHref({ set: 'retry', key: j.key }),
});

/** The time in an entry key `<score>-<jid>` (score: epoch seconds), as ISO text. */
export function scoreTime(key: string): string | null {
  const score = Number(key.slice(0, key.indexOf('-')));
  return key.includes('-') && Number.isFinite(score) ? new Date(score * 1000).toISOString() : null;
}

/** A dead entry: the death time is the set's score, which Sidekiq Web shows and sorts by. */
export const fromDead = (j: FailedJobView): JobRow => ({ ...fromFailed(j), diedAt: scoreTime(j.key), href: jobHref({ set: 'dead', key: j.key }) });

/** "Timeout::Error: took too long" → class and message (Sidekiq keeps them apart; a peek joins them). */
export function splitError(error: string | null | undefined): { errorClass: string | null; errorMessage: string | null } {
  if (!error) return { errorClass: null, errorMessage: null };
  const m = /^([A-Za-z_$][\w$.:]*): ([\s\S]*)$/.exec(error);
  return m ? { errorClass: m[1]!, errorMessage: m[2]! } : { errorClass: null, errorMessage: error };
}

/** A peeked job's page: a set entry by its key, a queued job (of the queue listed) by its jid. */
function peekHref(j: PeekJob, set: 'retry' | 'schedule' | 'dead' | { queue: string }): string | undefined {
  if (typeof set === 'object') return j.jid ? jobHref({ queue: set.queue, jid: j.jid }) : undefined;
  return j.key ? jobHref({ set, key: j.key }) : undefined;
}

/**
 * A job read from a sidekiq connection's Redis (read-only peek). `at` is the sorted set's score:
 * the next retry in the retry set, when it runs in the scheduled set, the death in the dead set.
 */
export function fromPeek(j: PeekJob, index: number, set: 'retry' | 'schedule' | 'dead' | { queue: string }): JobRow {
  return {
    href: peekHref(j, set),
    key: j.jid ?? `#${index + 1}`,
    class: j.class,
    args: j.args_truncated ? `${j.args}…` : j.args,
    queue: j.queue ?? undefined,
    enqueuedAt: j.enqueued_at,
    // Sidekiq's failed_at is the first failure; a peek does not read retried_at.
    failedAt: j.failed_at,
    firstFailedAt: j.failed_at,
    diedAt: set === 'dead' ? j.at : null,
    ...splitError(j.error),
    retryCount: j.retry_count ?? undefined,
    nextRetryAt: set === 'retry' ? j.at : null,
    runAt: set === 'schedule' ? j.at : null,
    actionKey: typeof set === 'object' ? j.jid : j.key,
  };
}

/** A time as people read it in a list: the app's one format (format.ts). */
export function stamp(iso: string | null | undefined, now = new Date()): string {
  return iso ? dateTime(iso, now.getTime()) : '—';
}
