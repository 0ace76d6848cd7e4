// What one read of a Sidekiq's Redis yields, and how the raw replies become it as Sidekiq 6.4's API
// computes it (Stats, Queue.all, ProcessSet, Stats::History). Both ways of reading (read-script.ts,
// script chunks; read-pipelines.ts, the plain commands) hand snapshotOf() the same RawRead, so
// they cannot differ in what they compute.

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
  /** Takes no new work: the hash's `quiet` is "true" (Sidekiq 6.4, after TSTP and while stopping after TERM) or "stopping". */
  quiet: boolean;
  /** The hash says "stopping" outright; 6.4 writes "true" for both, so there a stopping process shows as quiet. */
  stopping: boolean;
  rssKb: number;
}

export interface SidekiqQueue {
  name: string;
  size: number;
  /** `enqueued_at` of the oldest job (the list's tail), epoch seconds; null when empty or absent. */
  oldestEnqueuedAt: number | null;
}

export interface SidekiqSnapshot {
  /** Epoch ms when the last reply came: latencies are measured against it. */
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
  /** How the kept queues and processes were read: the read script (in chunks), or a pipeline. */
  readWith: 'script' | 'pipelines';
  /** Why the script was not used (the Redis refused it: ACL, renamed command, a proxy…); null when it was. */
  scriptRefused: string | null;
}

export interface ReadLimits {
  maxQueues: number;
  maxProcesses: number;
  /** Day counters read back from today (UTC), as Stats::History.new(days). */
  days: number;
  /** Queue names and process identities longer than this (UTF-8 bytes) are counted, never kept; absent: no bound. */
  maxNameBytes?: number;
}

/** The replies both ways of reading produce, before any parsing. */
export interface RawRead {
  processed: string | null;
  failed: string | null;
  retrySize: number;
  scheduledSize: number;
  deadSize: number;
  /** MGET of stat:processed:<day> / stat:failed:<day>, one per day of `days`. */
  daysProcessed: (string | null)[];
  daysFailed: (string | null)[];
  queuesTotal: number;
  processesTotal: number;
  /** In Queue.all's byte order, at most maxQueues: LLEN and LINDEX -1. */
  queues: { name: string; size: number; tail: string | null }[];
  /** In ProcessSet's byte order, at most maxProcesses: HMGET info, busy, beat, quiet, rss. */
  processes: { identity: string; fields: (string | null)[] }[];
}

/** HMGET's fields of a process hash, in this order in RawRead.processes[].fields. */
export const PROCESS_FIELDS = ['info', 'busy', 'beat', 'quiet', 'rss'] as const;

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
 * (Redis's Lua sorts with strcoll, by the server's locale: names are never sorted there.)
 */
export const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function utcDays(nowMs: number, days: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < days; i++) out.push(new Date(nowMs - i * 86_400_000).toISOString().slice(0, 10));
  return out;
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

export function snapshotOf(raw: RawRead, dayNames: string[], at: number, readWith: SidekiqSnapshot['readWith'], scriptRefused: string | null = null): SidekiqSnapshot {
  const queues: SidekiqQueue[] = raw.queues.map((q) => ({ name: q.name, size: num(q.size), oldestEnqueuedAt: enqueuedAtOf(q.tail) }));
  const processes: SidekiqProcess[] = [];
  for (const { identity, fields } of raw.processes) {
    const [info, busy, beat, quiet, rss] = fields;
    // A process that stopped since `processes` was listed has no hash any more: Sidekiq skips it too.
    if (info == null) continue;
    const parsed = parseInfo(info);
    if (!parsed) continue;
    processes.push({ identity, info: parsed, busy: rubyToI(busy), beat: rubyToF(beat), quiet: quiet === 'true' || quiet === 'stopping', stopping: quiet === 'stopping', rssKb: rubyToI(rss) });
  }
  const dayMap = (vals: (string | null)[]) => Object.fromEntries(dayNames.map((d, i) => [d, rubyToI(vals[i])]));
  return {
    at,
    queues,
    queuesTotal: raw.queuesTotal,
    processes,
    processesTotal: raw.processesTotal,
    processed: rubyToI(raw.processed),
    failed: rubyToI(raw.failed),
    retrySize: num(raw.retrySize),
    scheduledSize: num(raw.scheduledSize),
    deadSize: num(raw.deadSize),
    days: { processed: dayMap(raw.daysProcessed), failed: dayMap(raw.daysFailed) },
    readWith,
    scriptRefused,
  };
}
