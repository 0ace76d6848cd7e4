// A stored job payload (Sidekiq's JSON) read as Sidekiq::JobRecord reads it for Web's job page:
// display class and args (ActiveJob's wrapped job), the times, the retry policy, the error and its
// backtrace, tags, bid. A payload that does not parse still answers, raw only, as Sidekiq Web shows
// it. Every part is bounded: a payload is whatever an app pushed.
import type { JobDetail, JobDetailSet } from '../../contract/job-detail.ts';
import { jsonNestedDeeperThan, MAX_JSON_DEPTH } from '../util/json-depth.ts';
import { decodeBacktrace } from './backtrace.ts';
import { jobObject } from '../sidekiq/find-job.ts';

export const RAW_MAX = 256 * 1024;
export const ARGS_TEXT_MAX = 64 * 1024;
const TEXT_MAX = 10_000;
const NAME_MAX = 1000;
const TAGS_MAX = 50;
const ACTIVE_JOB_WRAPPER = 'ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper';

export type Where = 'queue' | JobDetailSet;

export interface Found {
  /** The stored text. */
  raw: string;
  where: Where;
  /** The set entry's key and score; null for a queued job. */
  key: string | null;
  score: number | null;
  /** Epoch ms, for a queued job's latency. */
  now: number;
}

/** Epoch seconds (Sidekiq 6) or milliseconds (Sidekiq 7's created_at) as ISO text; null when no time. */
function iso(v: unknown): string | null {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return null;
  const ms = v > 1e11 ? v : v * 1000;
  return ms < 8.64e15 ? new Date(ms).toISOString() : null;
}

function text(v: unknown, max = NAME_MAX): string | null {
  if (v === undefined || v === null) return null;
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

function retryPolicy(v: unknown): boolean | number | null {
  if (typeof v === 'boolean') return v;
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : null;
}

/** The args to answer, or why not (too large to answer as JSON, or nested past what serializers survive). */
function argsOf(j: Record<string, unknown>, raw: string, shown: unknown): { args: unknown; args_note: string | null } {
  if (shown === undefined) return { args: null, args_note: null };
  const t = JSON.stringify(shown) ?? 'null';
  if (t.length > ARGS_TEXT_MAX) return { args: null, args_note: `the arguments are ${Math.ceil(t.length / 1024)} KiB of JSON, more than the ${ARGS_TEXT_MAX / 1024} KiB shown here: read them in the raw payload` };
  if (jsonNestedDeeperThan(raw, j, MAX_JSON_DEPTH)) return { args: null, args_note: `the arguments nest deeper than ${MAX_JSON_DEPTH} levels: read them in the raw payload` };
  return { args: shown, args_note: null };
}

const scoreTime = (f: Found, set: JobDetailSet) => (f.where === set && f.score !== null ? iso(f.score) : null);

export function jobDetail(f: Found): JobDetail {
  const j = jobObject(f.raw);
  const base = {
    where: f.where,
    key: f.key,
    raw: f.raw.length > RAW_MAX ? f.raw.slice(0, RAW_MAX) : f.raw,
    raw_truncated: f.raw.length > RAW_MAX,
    next_retry_at: scoreTime(f, 'retry'),
    scheduled_at: scoreTime(f, 'schedule'),
    died_at: scoreTime(f, 'dead'),
  };
  if (!j) {
    return {
      ...base, unreadable: true, jid: null, class: null, wrapper_class: null, args: null, args_note: null, queue: null, created_at: null, enqueued_at: null, failed_at: null, retried_at: null,
      retry_count: null, retry: null, error_class: null, error_message: null, backtrace: null, backtrace_note: null, tags: [], bid: null, latency: null,
    };
  }
  const wrapped = j.class === ACTIVE_JOB_WRAPPER && typeof j.wrapped === 'string';
  const shownArgs = wrapped && Array.isArray(j.args) ? ((j.args[0] as { arguments?: unknown } | undefined)?.arguments ?? j.args) : j.args;
  const bt = decodeBacktrace(j.error_backtrace);
  const enqueued = iso(j.enqueued_at);
  const created = iso(j.created_at) ?? enqueued; // Sidekiq's created_at || enqueued_at
  const since = enqueued ?? created;
  return {
    ...base,
    unreadable: false,
    jid: text(j.jid),
    class: text(wrapped ? j.wrapped : j.class),
    wrapper_class: wrapped ? ACTIVE_JOB_WRAPPER : null,
    ...argsOf(j, f.raw, shownArgs),
    queue: text(j.queue),
    created_at: created,
    enqueued_at: enqueued,
    failed_at: iso(j.failed_at),
    retried_at: iso(j.retried_at),
    retry_count: typeof j.retry_count === 'number' && Number.isSafeInteger(j.retry_count) ? j.retry_count : null,
    retry: retryPolicy(j.retry),
    error_class: text(j.error_class),
    error_message: text(j.error_message, TEXT_MAX),
    backtrace: bt.lines,
    backtrace_note: bt.note,
    tags: Array.isArray(j.tags) ? j.tags.slice(0, TAGS_MAX).map((t) => text(t) ?? '') : [],
    bid: text(j.bid),
    latency: f.where === 'queue' && since ? Math.max(0, (f.now - Date.parse(since)) / 1000) : null,
  };
}
