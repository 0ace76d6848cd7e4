// The first part of every read of a Sidekiq's Redis, whichever way the rest is read: the counters
// and set sizes in one pipeline, and the names of the queues and processes to read, by SSCAN pages
// as Sidekiq 6.4's own API lists them (sscan_each), never SMEMBERS: on a set of a million names one
// SMEMBERS held Redis for seconds, every other client waiting. Each command here does a bounded
// amount of work (a page of SCAN_COUNT buckets), so another client waits at most one page.
//
// Which names are kept: the first `most` in byte order, held in a bounded buffer while the pages
// come (memory stays ~2×most names, whatever the set's size). Byte order is the order Sidekiq's
// Queue.all and Sidekiq Web list them in, so the subset is the one its UI shows first, and it only
// changes when a name is added or removed before the cut: charts of the kept queues stay
// continuous. The largest N would need every queue's LLEN each sample (a million commands) and
// would reshuffle as backlogs move, breaking the series it is meant to show.
import type { Redis } from 'ioredis';
import { byteOrder, type RawRead, type ReadLimits } from './snapshot.ts';

/**
 * SSCAN's COUNT: buckets visited per call. Against a 1M-name set on our 2-core machine a call cost
 * Redis ~0.5 µs per name (INFO commandstats: 51 µs at 100, 126 at 250, 524 at 1,000), while the
 * whole scan took the client about as long at 250 as at 1,000 (0.86 s vs 1.12 s: parsing the
 * names is most of it). 250 keeps each call near 0.1 ms, far under the ~1 ms any one call may hold
 * Redis, even on a machine slowed several times over.
 */
export const SCAN_COUNT = 250;

type PipelineResult = [Error | null, unknown][] | null;

export function values(res: PipelineResult): unknown[] {
  if (!res) throw new Error('the Redis pipeline was not run');
  return res.map(([err, v]) => {
    if (err) throw err;
    return v;
  });
}

/** The first `most` names in byte order of all it is given, in bounded memory; names longer than maxBytes are left out. */
export class FirstInByteOrder {
  private kept: string[] = [];
  /** Once `most` are kept: the last of them; a name at or past it cannot be among the first. */
  private ceiling: string | null = null;

  constructor(
    private readonly most: number,
    private readonly maxBytes = Infinity,
  ) {}

  add(names: readonly string[]): void {
    for (const n of names) {
      if (this.ceiling !== null && n >= this.ceiling) continue;
      // UTF-16 length × 3 bounds the UTF-8 bytes: the exact count only for names near the bound.
      if (n.length * 3 > this.maxBytes && Buffer.byteLength(n) > this.maxBytes) continue;
      this.kept.push(n);
    }
    if (this.kept.length >= 2 * this.most) this.trim();
  }

  private trim(): void {
    this.kept.sort(byteOrder);
    // SSCAN may return a name twice (the set was resized meanwhile): duplicates sit side by side now.
    const out: string[] = [];
    for (const n of this.kept) if (out[out.length - 1] !== n) out.push(n);
    if (out.length >= this.most) {
      out.length = this.most;
      this.ceiling = out[this.most - 1]!;
    }
    this.kept = out;
  }

  result(): string[] {
    this.trim();
    return this.kept;
  }
}

export async function scanRest(redis: Redis, key: string, first: [string, string[]], keeper: FirstInByteOrder): Promise<string[]> {
  let [cursor, members] = first;
  keeper.add(members);
  while (cursor !== '0') {
    [cursor, members] = await redis.sscan(key, cursor, 'COUNT', SCAN_COUNT);
    keeper.add(members);
  }
  return keeper.result();
}

/** RawRead's counters (totals from SCARD: every name, read or not), and the names to read (byte order, at most maxQueues / maxProcesses). */
export type Head = Omit<RawRead, 'queues' | 'processes'> & { queueNames: string[]; identities: string[] };

export async function readHead(redis: Redis, namespace: string, limits: ReadLimits, dayNames: string[]): Promise<Head> {
  const k = (key: string) => (namespace ? `${namespace}:${key}` : key);
  // The first page of each set rides along: a small Sidekiq is read in this one round trip.
  const p = redis
    .pipeline()
    .get(k('stat:processed'))
    .get(k('stat:failed'))
    .zcard(k('retry'))
    .zcard(k('schedule'))
    .zcard(k('dead'))
    .scard(k('queues'))
    .scard(k('processes'))
    .sscan(k('queues'), '0', 'COUNT', SCAN_COUNT)
    .sscan(k('processes'), '0', 'COUNT', SCAN_COUNT);
  if (dayNames.length) p.mget(dayNames.map((d) => k(`stat:processed:${d}`))).mget(dayNames.map((d) => k(`stat:failed:${d}`)));
  const v = values(await p.exec());
  // The two sets are paged side by side: one SSCAN of each in flight, never more.
  const [queueNames, identities] = await Promise.all([
    scanRest(redis, k('queues'), v[7] as [string, string[]], new FirstInByteOrder(limits.maxQueues, limits.maxNameBytes)),
    scanRest(redis, k('processes'), v[8] as [string, string[]], new FirstInByteOrder(limits.maxProcesses, limits.maxNameBytes)),
  ]);
  return {
    processed: v[0] as string | null,
    failed: v[1] as string | null,
    retrySize: v[2] as number,
    scheduledSize: v[3] as number,
    deadSize: v[4] as number,
    queuesTotal: v[5] as number,
    processesTotal: v[6] as number,
    daysProcessed: (v[9] as (string | null)[] | undefined) ?? [],
    daysFailed: (v[10] as (string | null)[] | undefined) ?? [],
    queueNames,
    identities,
  };
}

/** The head's counters as RawRead has them, rows to be added. */
export function rawOfHead(h: Head): RawRead {
  const { queueNames: _q, identities: _i, ...counts } = h;
  return { ...counts, queues: [], processes: [] };
}

/** Most queues and processes one call reads after the head: one script call, or one pipeline. */
export const CHUNK_QUEUES = 100;
export const CHUNK_PROCESSES = 50;

export type QueueRow = RawRead['queues'][number];
export type ProcessRow = RawRead['processes'][number];

/**
 * The head, then the kept names' rows read by `chunk` CHUNK_QUEUES queues and CHUNK_PROCESSES
 * processes at a time, ONE CHUNK AT A TIME: Redis runs every command a client has sent before it
 * serves another client, so chunks sent together would hold it for their sum. One pipeline of a
 * whole 10,000-queue, 5,000-process sample (25,000 commands) put another client's PING p99 at 2.9-3.0x
 * its unwatched value; in chunks, 1.4x (bench/sidekiq-huge.ts, 1M names).
 */
export async function readInChunks(
  redis: Redis,
  namespace: string,
  limits: ReadLimits,
  dayNames: string[],
  chunk: (queues: string[], identities: string[]) => Promise<{ queues: QueueRow[]; processes: ProcessRow[] }>,
): Promise<RawRead> {
  const head = await readHead(redis, namespace, limits, dayNames);
  const raw = rawOfHead(head);
  const { queueNames, identities } = head;
  for (let qi = 0, pi = 0; qi < queueNames.length || pi < identities.length; qi += CHUNK_QUEUES, pi += CHUNK_PROCESSES) {
    const rows = await chunk(queueNames.slice(qi, qi + CHUNK_QUEUES), identities.slice(pi, pi + CHUNK_PROCESSES));
    raw.queues.push(...rows.queues);
    raw.processes.push(...rows.processes);
  }
  return raw;
}
