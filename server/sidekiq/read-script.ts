// The rows of a read of a Sidekiq's Redis by a read-only Lua script (EVALSHA, loaded on NOSCRIPT):
// the same LLEN, LINDEX and HMGET as read-pipelines.ts, run inside Redis, so the client sends one
// command per chunk instead of ~2 per queue and 1 per process (ioredis's per-command cost, ~15 µs
// each, was most of a read). Payloads come back raw and are parsed here, not with cjson in Lua:
// decoding there cost Redis ~7 µs per entry, time every other client would wait through. A script
// holds Redis for its whole run, so one call reads at most CHUNK_QUEUES queues and CHUNK_PROCESSES
// processes (0.41 ms of Redis per call, INFO commandstats, bench/sidekiq.ts), one chunk at a time
// (read-head.ts's readInChunks, after the head's SSCAN pages).
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { PROCESS_FIELDS, type RawRead, type ReadLimits } from './snapshot.ts';
import { readInChunks, type ProcessRow, type QueueRow } from './read-head.ts';

export { CHUNK_PROCESSES, CHUNK_QUEUES } from './read-head.ts';

/*
 * ARGV[1] key prefix ("" or "<namespace>:"); ARGV[2] = n; ARGV[3 .. 2+n] queue names, the rest identities.
 * → { Q, P }: Q = {name, LLEN, LINDEX -1 (nil when empty), ...}, P = {identity, info, busy, beat, quiet, rss, ...}.
 * Only reads (LLEN, LINDEX, HMGET).
 */
export const READ_SCRIPT = `local call, p = redis.call, ARGV[1]
local nq = tonumber(ARGV[2])
local q, n = {}, 0
for i = 3, 2 + nq do
  local key = p .. 'queue:' .. ARGV[i]
  local size = call('LLEN', key)
  q[n + 1], q[n + 2], q[n + 3] = ARGV[i], size, size > 0 and call('LINDEX', key, -1)
  n = n + 3
end
local pr, m = {}, 0
for i = 3 + nq, #ARGV do
  local h = call('HMGET', p .. ARGV[i], '${PROCESS_FIELDS.join("', '")}')
  pr[m + 1] = ARGV[i]
  for f = 1, ${PROCESS_FIELDS.length} do pr[m + 1 + f] = h[f] end
  m = m + ${PROCESS_FIELDS.length + 1}
end
return { q, pr }
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

export function readRawByScript(redis: Redis, namespace: string, limits: ReadLimits, dayNames: string[]): Promise<RawRead> {
  const prefix = namespace ? `${namespace}:` : '';
  return readInChunks(redis, namespace, limits, dayNames, async (qs, ids) => {
    const [qFlat, pFlat] = (await runScript(redis, [prefix, qs.length, ...qs, ...ids])) as [Cell[], Cell[]];
    return { queues: queueRows(qFlat, 0), processes: processRows(pFlat, 0) };
  });
}
