// The rows of a read of a Sidekiq's Redis by a read-only Lua script (EVALSHA, loaded on NOSCRIPT):
// the same LLEN, LINDEX and HMGET as read-pipelines.ts, run inside Redis, so the client sends one
// command per chunk instead of ~2 per queue and 1 per process (ioredis's per-command cost, ~15 µs
// each, was most of a read). Payloads come back raw and are parsed here, not with cjson in Lua:
// decoding there cost Redis ~7 µs per entry, time every other client would wait through. A script
// holds Redis for its whole run, so one call reads at most CHUNK_QUEUES queues and CHUNK_PROCESSES
// processes (0.41 ms of Redis per call, INFO commandstats, bench/sidekiq.ts), one chunk at a time
// (read-head.ts's readInChunks, after the head's SSCAN pages).
import type { Redis } from 'ioredis';
import { scriptSha, SIDEKIQ_READ_TEMPLATE } from '../redis/lua-scripts.ts';
import { PROCESS_FIELDS, type RawRead, type ReadLimits } from './snapshot.ts';
import { readInChunks, type ProcessRow, type QueueRow } from './read-head.ts';

export { CHUNK_PROCESSES, CHUNK_QUEUES } from './read-head.ts';

/** scripts/read.lua with the process fields it reads filled in. */
export const READ_SCRIPT = SIDEKIQ_READ_TEMPLATE.replaceAll('$PROCESS_FIELDS', PROCESS_FIELDS.map((f) => `'${f}'`).join(', '))
  .replaceAll('$FIELD_COUNT', String(PROCESS_FIELDS.length))
  .replaceAll('$STRIDE', String(PROCESS_FIELDS.length + 1));

export const READ_SCRIPT_SHA = scriptSha(READ_SCRIPT);

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
