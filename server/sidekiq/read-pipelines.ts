// The plain way to read a Sidekiq's Redis, as Sidekiq's own API does it: the head (read-head.ts:
// counters, set sizes, names by SSCAN pages), then each kept queue's LLEN and oldest entry and each
// kept process's hash, in pipelines of one chunk each, one at a time (readInChunks).
// It is the fallback when a Redis refuses the read script (read.ts), and the reference the script
// is checked against. Nothing is written: Sidekiq's ProcessSet prunes dead processes with SREM, we
// only skip them.
import type { Redis } from 'ioredis';
import { PROCESS_FIELDS, type RawRead, type ReadLimits } from './snapshot.ts';
import { readInChunks, values } from './read-head.ts';

export function readRawByPipelines(redis: Redis, namespace: string, limits: ReadLimits, dayNames: string[]): Promise<RawRead> {
  const k = (key: string) => (namespace ? `${namespace}:` : '') + key;
  return readInChunks(redis, namespace, limits, dayNames, async (qs, ids) => {
    const p = redis.pipeline();
    for (const q of qs) p.llen(k(`queue:${q}`)).lindex(k(`queue:${q}`), -1);
    for (const id of ids) p.hmget(k(id), ...PROCESS_FIELDS);
    const v = values(await p.exec());
    return {
      queues: qs.map((name, i) => ({ name, size: v[2 * i] as number, tail: v[2 * i + 1] as string | null })),
      processes: ids.map((identity, i) => ({ identity, fields: v[2 * qs.length + i] as (string | null)[] })),
    };
  });
}
