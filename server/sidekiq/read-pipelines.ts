// The plain way to read a Sidekiq's Redis, as Sidekiq's own API does it: the head (read-head.ts:
// counters, set sizes, names by SSCAN pages), then one pipeline of every kept queue's LLEN and
// oldest entry and every kept process's hash. Each of those commands is O(1) and Redis takes a
// client's pipeline 16 KiB of commands at a time, so other clients are served between the pieces.
// It is the fallback when a Redis refuses the read script (read.ts), and the reference the script
// is checked against. Nothing is written: Sidekiq's ProcessSet prunes dead processes with SREM, we
// only skip them.
import type { Redis } from 'ioredis';
import { PROCESS_FIELDS, type RawRead, type ReadLimits } from './snapshot.ts';
import { rawOfHead, readHead, values } from './read-head.ts';

export async function readRawByPipelines(redis: Redis, namespace: string, limits: ReadLimits, dayNames: string[]): Promise<RawRead> {
  const k = (key: string) => (namespace ? `${namespace}:${key}` : key);
  const head = await readHead(redis, namespace, limits, dayNames);
  const { queueNames, identities } = head;
  const second = redis.pipeline();
  for (const q of queueNames) second.llen(k(`queue:${q}`)).lindex(k(`queue:${q}`), -1);
  for (const id of identities) second.hmget(k(id), ...PROCESS_FIELDS);
  const rest = queueNames.length + identities.length ? values(await second.exec()) : [];
  return {
    ...rawOfHead(head),
    queues: queueNames.map((name, i) => ({ name, size: rest[2 * i] as number, tail: rest[2 * i + 1] as string | null })),
    processes: identities.map((identity, i) => ({ identity, fields: rest[2 * queueNames.length + i] as (string | null)[] })),
  };
}
