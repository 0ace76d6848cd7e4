// One read of a Sidekiq's Redis, as Sidekiq's own API reads it (sidekiq/api.rb 6.4: Stats,
// Queue.all, ProcessSet, Stats::History), in two pipelines: the sets, counters and set sizes first,
// then every queue's LLEN and oldest entry and every process's hash. Two round trips whatever the
// number of queues and processes; at most `maxQueues` queues and `maxProcesses` processes are read
// per sample (the totals say how many there are). Nothing is written: Sidekiq's ProcessSet prunes
// dead processes with SREM, we only skip them.
import type { Redis } from 'ioredis';

export interface ProcessInfo {
  hostname: string;
  pid: number;
  tag: string;
  labels: string[];
  queues: string[];
  concurrency: number;
  /** Epoch seconds. */
  started_at: number;
}

export interface SidekiqProcess {
  identity: string;
  info: ProcessInfo;
  busy: number;
  /** Epoch seconds of the last heartbeat. */
  beat: number;
  quiet: boolean;
  rssKb: number;
}

export interface SidekiqQueue {
  name: string;
  size: number;
  /** `enqueued_at` of the oldest job (the list's tail), epoch seconds; null when empty or absent. */
  oldestEnqueuedAt: number | null;
}

export interface SidekiqSnapshot {
  /** Epoch ms when the second pipeline answered: latencies are measured against it. */
  at: number;
  queues: SidekiqQueue[];
  queuesTotal: number;
  processes: SidekiqProcess[];
  processesTotal: number;
  processed: number;
  failed: number;
  retrySize: number;
  scheduledSize: number;
  deadSize: number;
  days: { processed: Record<string, number>; failed: Record<string, number> };
}

export interface ReadLimits {
  maxQueues: number;
  maxProcesses: number;
  /** Day counters read back from today (UTC), as Stats::History.new(days). */
  days: number;
}

/** Ruby's String#to_i: leading digits (with a sign), 0 otherwise. */
export function rubyToI(v: string | null | undefined): number {
  if (v == null) return 0;
  const m = /^\s*([+-]?\d+)/.exec(v);
  return m ? Number(m[1]) : 0;
}

/** Ruby's String#to_f, enough for the floats Sidekiq writes. */
export function rubyToF(v: string | null | undefined): number {
  if (v == null) return 0;
  const m = /^\s*([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(v);
  return m ? Number(m[1]) : 0;
}

/**
 * Ruby's default String sort is bytewise (UTF-8); JS compares UTF-16 units, which orders every name
 * alike except astral characters against U+E000-U+FFFF. Converting to bytes in the comparator would
 * allocate two Buffers per comparison (~20,000 per 1,000 names, every sample) for that corner.
 */
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function utcDays(nowMs: number, days: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < days; i++) out.push(new Date(nowMs - i * 86_400_000).toISOString().slice(0, 10));
  return out;
}

type PipelineResult = [Error | null, unknown][] | null;

function values(res: PipelineResult): unknown[] {
  if (!res) throw new Error('the Redis pipeline was not run');
  return res.map(([err, v]) => {
    if (err) throw err;
    return v;
  });
}

const num = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

function parseInfo(text: string): ProcessInfo | null {
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (!j || typeof j !== 'object') return null;
  return {
    hostname: String(j.hostname ?? ''),
    pid: Math.trunc(num(j.pid)),
    tag: String(j.tag ?? ''),
    labels: strs(j.labels),
    queues: strs(j.queues),
    concurrency: Math.trunc(num(j.concurrency)),
    started_at: num(j.started_at),
  };
}

/** `enqueued_at` of a job payload; null when the entry is not a job or has none (latency 0, as Sidekiq's `|| now`). */
export function enqueuedAtOf(entry: string | null): number | null {
  if (entry == null) return null;
  try {
    const j = JSON.parse(entry) as { enqueued_at?: unknown };
    return typeof j?.enqueued_at === 'number' && Number.isFinite(j.enqueued_at) ? j.enqueued_at : null;
  } catch {
    return null;
  }
}

export async function readSidekiq(redis: Redis, namespace: string, limits: ReadLimits, now: () => number): Promise<SidekiqSnapshot> {
  const k = (key: string) => (namespace ? `${namespace}:${key}` : key);
  const dayNames = utcDays(now(), limits.days);
  const first = values(
    await redis
      .pipeline()
      .smembers(k('queues'))
      .smembers(k('processes'))
      .get(k('stat:processed'))
      .get(k('stat:failed'))
      .zcard(k('retry'))
      .zcard(k('schedule'))
      .zcard(k('dead'))
      .mget(dayNames.map((d) => k(`stat:processed:${d}`)))
      .mget(dayNames.map((d) => k(`stat:failed:${d}`)))
      .exec(),
  );
  const allQueues = (first[0] as string[]).sort(byteOrder);
  const allProcs = (first[1] as string[]).sort(byteOrder);
  const queueNames = allQueues.slice(0, limits.maxQueues);
  const identities = allProcs.slice(0, limits.maxProcesses);

  const second = redis.pipeline();
  for (const q of queueNames) second.llen(k(`queue:${q}`)).lindex(k(`queue:${q}`), -1);
  for (const id of identities) second.hmget(k(id), 'info', 'busy', 'beat', 'quiet', 'rss');
  const rest = queueNames.length + identities.length ? values(await second.exec()) : [];
  const at = now();

  const queues: SidekiqQueue[] = queueNames.map((name, i) => ({
    name,
    size: num(rest[2 * i]),
    oldestEnqueuedAt: enqueuedAtOf(rest[2 * i + 1] as string | null),
  }));
  const processes: SidekiqProcess[] = [];
  identities.forEach((identity, i) => {
    const [info, busy, beat, quiet, rss] = rest[2 * queueNames.length + i] as (string | null)[];
    // A process that stopped between the two reads has no hash any more: Sidekiq skips it too.
    if (info == null) return;
    const parsed = parseInfo(info);
    if (!parsed) return;
    processes.push({ identity, info: parsed, busy: rubyToI(busy), beat: rubyToF(beat), quiet: quiet === 'true', rssKb: rubyToI(rss) });
  });
  const dayMap = (vals: unknown) => Object.fromEntries(dayNames.map((d, i) => [d, rubyToI((vals as (string | null)[])[i])]));
  return {
    at,
    queues,
    queuesTotal: allQueues.length,
    processes,
    processesTotal: allProcs.length,
    processed: rubyToI(first[2] as string | null),
    failed: rubyToI(first[3] as string | null),
    retrySize: num(first[4]),
    scheduledSize: num(first[5]),
    deadSize: num(first[6]),
    days: { processed: dayMap(first[7]), failed: dayMap(first[8]) },
  };
}
