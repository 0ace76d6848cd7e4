// Read-only peeks into a Sidekiq: one page of a queue, or of the retry, scheduled or dead set, in
// the order Sidekiq Web shows them (a queue newest first as LRANGE 0.. gives it; retries and
// scheduled jobs by when they run; the dead set newest death first). One pipeline: the page and
// the total. Nothing is ever deleted or moved: this is someone's production Redis.
import { jobObject } from './find-job.ts';
import type { Redis } from 'ioredis';
import type { PeekJob, PeekPage } from '../../contract/sidekiq.ts';
import { jsonNestedDeeperThan, MAX_JSON_DEPTH } from '../util/json-depth.ts';
import { jsonMemberText } from '../util/json-members.ts';
import { scoreText } from '../jobs/entry-key.ts';

const ARGS_MAX = 200;
const ERROR_MAX = 500;
const ACTIVE_JOB_WRAPPER = 'ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper';

export type PeekSet = 'retry' | 'dead' | 'schedule';

const iso = (epochS: unknown): string | null =>
  typeof epochS === 'number' && Number.isFinite(epochS) && Math.abs(epochS) < 8.64e12 ? new Date(epochS * 1000).toISOString() : null;

const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max)}…` : s);

/** One entry as a row: Sidekiq's display_class/display_args for ActiveJob, the raw text when it is no job. */
export function peekJob(entry: string, score: number | null, argsMax = ARGS_MAX): PeekJob {
  const j = jobObject(entry); // null: shown as unreadable below
  const at = score === null ? null : iso(score);
  // Sidekiq Web's key: the score as Ruby prints it, then the jid ("" for an entry that is no job).
  const key = (jid: unknown) => (score === null ? null : `${scoreText(score)}-${typeof jid === 'string' ? jid : ''}`);
  if (!j) {
    return { class: '?', args: cut(entry, argsMax), args_truncated: entry.length > argsMax, jid: null, queue: null, enqueued_at: null, failed_at: null, at, retry_count: null, error: null, unreadable: true, key: key(null) };
  }
  const wrapped = j.class === ACTIVE_JOB_WRAPPER && typeof j.wrapped === 'string';
  const rawArgs = wrapped && Array.isArray(j.args) ? ((j.args[0] as { arguments?: unknown } | undefined)?.arguments ?? j.args) : j.args;
  // Args nested past what JSON.stringify survives (an app may push that) are shown as stored.
  const args = jsonNestedDeeperThan(entry, j, MAX_JSON_DEPTH) ? (jsonMemberText(entry, 'args') ?? entry) : (JSON.stringify(rawArgs ?? []) ?? '[]');
  const error = j.error_class || j.error_message ? cut(`${String(j.error_class ?? 'Error')}: ${String(j.error_message ?? '')}`, ERROR_MAX) : null;
  return {
    class: String(wrapped ? j.wrapped : (j.class ?? '?')),
    args: cut(args, argsMax),
    args_truncated: args.length > argsMax,
    jid: typeof j.jid === 'string' ? j.jid : null,
    queue: typeof j.queue === 'string' ? j.queue : null,
    enqueued_at: iso(j.enqueued_at),
    failed_at: iso(j.failed_at),
    at,
    retry_count: typeof j.retry_count === 'number' && Number.isInteger(j.retry_count) ? j.retry_count : null,
    error,
    unreadable: false,
    key: key(j.jid),
  };
}

function checked(res: [Error | null, unknown][] | null): unknown[] {
  if (!res) throw new Error('the Redis pipeline was not run');
  return res.map(([err, v]) => {
    if (err) throw err;
    return v;
  });
}

/** Sidekiq's Queue#latency: now - the oldest job's enqueued_at (the list's tail), 0 when empty or unreadable. */
function latencyOf(oldest: string | null, now: number): number {
  if (oldest === null) return 0;
  try {
    const at = (JSON.parse(oldest) as { enqueued_at?: unknown }).enqueued_at;
    return typeof at === 'number' && Number.isFinite(at) ? Math.max(0, now / 1000 - at) : 0;
  } catch {
    return 0;
  }
}

export async function peekQueue(redis: Redis, namespace: string, queue: string, page: number, perPage: number, now = Date.now()): Promise<PeekPage> {
  const key = `${namespace ? `${namespace}:` : ''}queue:${queue}`;
  const start = (page - 1) * perPage;
  const [total, entries, oldest] = checked(await redis.pipeline().llen(key).lrange(key, start, start + perPage - 1).lindex(key, -1).exec());
  return { total: total as number, page, per_page: perPage, jobs: (entries as string[]).map((e) => peekJob(e, null)), latency: latencyOf(oldest as string | null, now) };
}

export async function peekSet(redis: Redis, namespace: string, set: PeekSet, page: number, perPage: number): Promise<PeekPage> {
  const key = `${namespace ? `${namespace}:` : ''}${set}`;
  const start = (page - 1) * perPage;
  const p = redis.pipeline().zcard(key);
  if (set === 'dead') p.zrevrange(key, start, start + perPage - 1, 'WITHSCORES');
  else p.zrange(key, String(start), String(start + perPage - 1), 'WITHSCORES');
  const [total, flat] = checked(await p.exec());
  const pairs = flat as string[];
  const jobs: PeekJob[] = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const job = peekJob(pairs[i]!, Number(pairs[i + 1]));
    jobs.push({ ...job, key: job.jid === null ? null : `${scoreText(Number(pairs[i + 1]))}-${job.jid}` });
  }
  return { total: total as number, page, per_page: perPage, jobs };
}
