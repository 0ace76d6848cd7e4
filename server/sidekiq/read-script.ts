// One read of a Sidekiq's Redis as a single read-only Lua script (EVALSHA, loaded on NOSCRIPT): the
// same commands as read-pipelines.ts, run inside Redis, so the client sends one command instead of
// ~2 per queue and 1 per process (ioredis's per-command cost, ~15 µs each, was most of a read) and
// the answer is one consistent snapshot (a script is atomic). Payloads come back raw and are parsed
// here, not with cjson in Lua: decoding there cost Redis ~7 µs per entry on our machine, time every
// other client of that Redis would wait through. A script holds Redis for its whole run, so one
// call reads at most CHUNK_QUEUES queues and CHUNK_PROCESSES processes (~2,500 commands inside
// Redis, 9-11 ms on our loaded 2-core machine); past that, or past the limits, the first call
// answers the names only and the rest is read in chunks sent together: one more round trip, each
// chunk atomic.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { byteOrder, PROCESS_FIELDS, type RawRead, type ReadLimits } from './snapshot.ts';

export const CHUNK_QUEUES = 1000;
export const CHUNK_PROCESSES = 500;

/*
 * ARGV[1] key prefix ("" or "<namespace>:"); ARGV[2] "all" or "these".
 * all:   ARGV[3], ARGV[4] most queues and processes read in this call; ARGV[5..] days (YYYY-MM-DD).
 *        → { {processed, failed, retry, schedule, dead}, days processed, days failed, Q, P } where
 *          Q = {1, name, LLEN, LINDEX -1 (nil when empty), ...} or, past ARGV[3] queues, {0, name, ...}, and
 *          P = {1, identity, info, busy, beat, quiet, rss, ...} or {0, identity, ...}.
 * these: ARGV[3] = n, ARGV[4 .. 3+n] queue names, the rest identities → { Q, P } without the flags.
 * Only reads (GET, MGET, ZCARD, SMEMBERS, LLEN, LINDEX, HMGET); nothing is sorted here (strcoll).
 */
export const READ_SCRIPT = `local call, p = redis.call, ARGV[1]
local function queues(names, from, to, out)
  local n = #out
  for i = from, to do
    local key = p .. 'queue:' .. names[i]
    local size = call('LLEN', key)
    out[n + 1] = names[i]
    out[n + 2] = size
    out[n + 3] = size > 0 and call('LINDEX', key, -1)
    n = n + 3
  end
  return out
end
local function processes(ids, from, to, out)
  local n = #out
  for i = from, to do
    local h = call('HMGET', p .. ids[i], '${PROCESS_FIELDS.join("', '")}')
    out[n + 1] = ids[i]
    for f = 1, ${PROCESS_FIELDS.length} do out[n + 1 + f] = h[f] end
    n = n + ${PROCESS_FIELDS.length + 1}
  end
  return out
end
if ARGV[2] == 'these' then
  local nq = tonumber(ARGV[3])
  return { queues(ARGV, 4, 3 + nq, {}), processes(ARGV, 4 + nq, #ARGV, {}) }
end
local function members(set, most, read)
  local m = call('SMEMBERS', p .. set)
  if #m > most then
    table.insert(m, 1, 0)
    return m
  end
  return read(m, 1, #m, { 1 })
end
local dp, df = {}, {}
for i = 5, #ARGV do
  dp[#dp + 1] = p .. 'stat:processed:' .. ARGV[i]
  df[#df + 1] = p .. 'stat:failed:' .. ARGV[i]
end
local stats = { call('GET', p .. 'stat:processed'), call('GET', p .. 'stat:failed'), call('ZCARD', p .. 'retry'), call('ZCARD', p .. 'schedule'), call('ZCARD', p .. 'dead') }
return { stats, #dp > 0 and call('MGET', unpack(dp)) or {}, #df > 0 and call('MGET', unpack(df)) or {},
  members('queues', tonumber(ARGV[3]), queues), members('processes', tonumber(ARGV[4]), processes) }
`;

export const READ_SCRIPT_SHA = createHash('sha1').update(READ_SCRIPT).digest('hex');

type Cell = string | number | null;

async function runScript(redis: Redis, args: (string | number)[]): Promise<unknown> {
  try {
    return await redis.evalsha(READ_SCRIPT_SHA, 0, ...args);
  } catch (err) {
    // Not cached on this server yet (or flushed since): EVAL sends the text, and caches it.
    if (/^NOSCRIPT/.test(String((err as Error)?.message))) return redis.eval(READ_SCRIPT, 0, ...args);
    throw err;
  }
}

type QueueRow = RawRead['queues'][number];
type ProcessRow = RawRead['processes'][number];

function queueRows(flat: Cell[], from: number): QueueRow[] {
  const rows: QueueRow[] = [];
  for (let i = from; i + 2 < flat.length; i += 3) rows.push({ name: flat[i] as string, size: flat[i + 1] as number, tail: flat[i + 2] as string | null });
  return rows;
}

const STRIDE = PROCESS_FIELDS.length + 1;

function processRows(flat: Cell[], from: number): ProcessRow[] {
  const rows: ProcessRow[] = [];
  for (let i = from; i + STRIDE - 1 < flat.length; i += STRIDE) rows.push({ identity: flat[i] as string, fields: flat.slice(i + 1, i + STRIDE) as (string | null)[] });
  return rows;
}

const byName = (a: QueueRow, b: QueueRow) => byteOrder(a.name, b.name);
const byIdentity = (a: ProcessRow, b: ProcessRow) => byteOrder(a.identity, b.identity);

/** Rows when the first call read them (sorted here), else the names still to read (byte order, cut at `most`). */
function firstCall<R>(flat: Cell[], most: number, rows: (f: Cell[], from: number) => R[], order: (a: R, b: R) => number) {
  if (flat[0] === 1) {
    const read = rows(flat, 1).sort(order);
    return { read, toRead: [] as string[], total: read.length };
  }
  const names = (flat.slice(1) as string[]).sort(byteOrder);
  return { read: [] as R[], toRead: names.slice(0, most), total: names.length };
}

export async function readRawByScript(redis: Redis, namespace: string, limits: ReadLimits, dayNames: string[]): Promise<RawRead> {
  const prefix = namespace ? `${namespace}:` : '';
  const [stats, daysProcessed, daysFailed, q, p] = (await runScript(redis, [
    prefix,
    'all',
    Math.min(limits.maxQueues, CHUNK_QUEUES),
    Math.min(limits.maxProcesses, CHUNK_PROCESSES),
    ...dayNames,
  ])) as [Cell[], (string | null)[], (string | null)[], Cell[], Cell[]];
  const queues = firstCall(q, limits.maxQueues, queueRows, byName);
  const processes = firstCall(p, limits.maxProcesses, processRows, byIdentity);

  const calls: Promise<unknown>[] = [];
  for (let qi = 0, pi = 0; qi < queues.toRead.length || pi < processes.toRead.length; qi += CHUNK_QUEUES, pi += CHUNK_PROCESSES) {
    const qs = queues.toRead.slice(qi, qi + CHUNK_QUEUES);
    calls.push(runScript(redis, [prefix, 'these', qs.length, ...qs, ...processes.toRead.slice(pi, pi + CHUNK_PROCESSES)]));
  }
  // Sent together (ioredis writes each at once): one more round trip, whatever the number of chunks.
  for (const [qFlat, pFlat] of (await Promise.all(calls)) as [Cell[], Cell[]][]) {
    queues.read.push(...queueRows(qFlat, 0));
    processes.read.push(...processRows(pFlat, 0));
  }
  return {
    processed: stats[0] as string | null,
    failed: stats[1] as string | null,
    retrySize: stats[2] as number,
    scheduledSize: stats[3] as number,
    deadSize: stats[4] as number,
    daysProcessed,
    daysFailed,
    queuesTotal: queues.total,
    processesTotal: processes.total,
    queues: queues.read,
    processes: processes.read,
  };
}
