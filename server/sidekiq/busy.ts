// A watched Sidekiq's Busy page, read as Sidekiq::Workers 6.4 reads it: for each process in
// `processes` whose hash still exists (a dead one's has expired), its `<identity>:workers` hash,
// thread id → {"queue", "payload" (the job's JSON as a string), "run_at" (epoch s)}. Read-only and
// bounded like every read of someone's Redis here: the names by SSCAN pages, at most maxProcesses,
// in byte order (read-head.ts); CHUNK_PROCESSES processes per pipeline, one pipeline at a time; each
// workers hash by HSCAN pages, not HGETALL (a hash is as big as its process's concurrency, but a
// garbage one could be any size, and one HGETALL of it would hold the Redis). Rows stop at `limit`;
// HLEN counts the rest. An entry that is not what Sidekiq writes is a row with what parsed.
import { jobObject } from './find-job.ts';
import type { Redis } from 'ioredis';
import type { BusyJob, BusyPage } from '../../contract/busy.ts';
import { CHUNK_PROCESSES, FirstInByteOrder, SCAN_COUNT, scanRest } from './read-head.ts';
import { peekJob } from './peek.ts';

/** Where `args` was cut, the whole arguments are answered up to this many characters. */
const ARGS_FULL_MAX = 64 * 1024;

export interface BusyLimits {
  maxProcesses: number;
  maxNameBytes: number;
  limit: number;
}

export interface WorkerOf {
  process: string;
  quiet: boolean;
  stopping: boolean;
  thread: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** One running job as a row: `payload` is the job's JSON (null: none readable), `runAtS` epoch seconds. */
export function busyRow(w: WorkerOf, queue: string | null, payload: string | null, runAtS: number | null, nowMs: number, unreadable = false): BusyJob {
  const job = peekJob(payload ?? '', null);
  const full = job.args_truncated ? peekJob(payload ?? '', null, ARGS_FULL_MAX).args : null;
  const runAt = runAtS !== null && Number.isFinite(runAtS) && Math.abs(runAtS) < 8.64e12 ? runAtS : null;
  return {
    ...w,
    queue: queue ?? job.queue,
    class: job.class,
    args: job.args,
    args_truncated: job.args_truncated,
    args_full: full,
    jid: job.jid,
    run_at: runAt === null ? null : new Date(runAt * 1000).toISOString(),
    running_for_s: runAt === null ? null : Math.max(0, nowMs / 1000 - runAt),
    unreadable: unreadable || job.unreadable,
  };
}

/** A `<identity>:workers` entry: {"queue", "payload", "run_at"}; the payload a string (6.4) or an object (older). */
export function workerRow(w: WorkerOf, entry: string, nowMs: number): BusyJob {
  const e = jobObject(entry);
  if (!e) return busyRow(w, null, entry, null, nowMs, true);
  const payload = typeof e.payload === 'string' ? e.payload : isObject(e.payload) ? JSON.stringify(e.payload) : null;
  const runAt = typeof e.run_at === 'number' ? e.run_at : typeof e.run_at === 'string' && e.run_at.trim() !== '' ? Number(e.run_at) : null;
  return busyRow(w, typeof e.queue === 'string' ? e.queue : null, payload, runAt, nowMs, payload === null);
}

/** Oldest start first (Sidekiq::Workers sorts by run_at), then by process and thread. */
export function byStart(a: BusyJob, b: BusyJob): number {
  const ta = a.run_at === null ? Infinity : Date.parse(a.run_at);
  const tb = b.run_at === null ? Infinity : Date.parse(b.run_at);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.process < b.process ? -1 : a.process > b.process ? 1 : a.thread < b.thread ? -1 : a.thread > b.thread ? 1 : 0;
}

type Reply = [Error | null, unknown];

/** A command's value; a type error (a key that is not a hash) is none, any other error is thrown. */
function valueOr(r: Reply | undefined, none: unknown): unknown {
  if (!r) throw new Error('the Redis pipeline was not run');
  const [err, v] = r;
  if (err) {
    if (/^WRONGTYPE/.test(err.message)) return none;
    throw err;
  }
  return v;
}

export async function readBusy(redis: Redis, namespace: string, limits: BusyLimits, now: () => number): Promise<BusyPage> {
  const k = (key: string) => (namespace ? `${namespace}:${key}` : key);
  const first = await redis.pipeline().scard(k('processes')).sscan(k('processes'), '0', 'COUNT', SCAN_COUNT).exec();
  const processesTotal = valueOr(first?.[0], 0) as number;
  const identities = await scanRest(redis, k('processes'), valueOr(first?.[1], ['0', []]) as [string, string[]], new FirstInByteOrder(limits.maxProcesses, limits.maxNameBytes));
  const jobs: BusyJob[] = [];
  let total = 0;
  let read = 0;
  for (let i = 0; i < identities.length; i += CHUNK_PROCESSES) {
    const ids = identities.slice(i, i + CHUNK_PROCESSES);
    const p = redis.pipeline();
    for (const id of ids) p.exists(k(id)).hget(k(id), 'quiet').hlen(k(`${id}:workers`)).hscan(k(`${id}:workers`), '0', 'COUNT', SCAN_COUNT);
    const res = (await p.exec()) ?? [];
    for (let j = 0; j < ids.length; j++) {
      const id = ids[j]!;
      if (!(valueOr(res[4 * j], 0) as number)) continue;
      read++;
      const quiet = valueOr(res[4 * j + 1], null) as string | null;
      const w = { process: id, quiet: quiet === 'true' || quiet === 'stopping', stopping: quiet === 'stopping' };
      total += valueOr(res[4 * j + 2], 0) as number;
      let [cursor, flat] = valueOr(res[4 * j + 3], ['0', []]) as [string, string[]];
      // HSCAN may answer a field twice when the hash grows meanwhile.
      const seen = new Set<string>();
      for (;;) {
        for (let f = 0; f + 1 < flat.length && jobs.length < limits.limit; f += 2) {
          if (seen.has(flat[f]!)) continue;
          seen.add(flat[f]!);
          jobs.push(workerRow({ ...w, thread: flat[f]! }, flat[f + 1]!, now()));
        }
        if (cursor === '0' || jobs.length >= limits.limit) break;
        [cursor, flat] = valueOr(await redis.pipeline().hscan(k(`${id}:workers`), cursor, 'COUNT', SCAN_COUNT).exec().then((r) => r?.[0]), ['0', []]) as [string, string[]];
      }
    }
  }
  jobs.sort(byStart);
  return { at: new Date(now()).toISOString(), total: Math.max(total, jobs.length), processes_read: read, processes_total: processesTotal, jobs };
}
