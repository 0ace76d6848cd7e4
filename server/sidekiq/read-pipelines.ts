// The plain way to read a Sidekiq's Redis, as Sidekiq's own API does it: two pipelines, the sets,
// counters and set sizes first, then every queue's LLEN and oldest entry and every process's hash.
// It is the fallback when a Redis refuses the read script (read.ts), and the reference the script
// is checked against. Nothing is written: Sidekiq's ProcessSet prunes dead processes with SREM, we
// only skip them.
import type { Redis } from 'ioredis';
import { byteOrder, PROCESS_FIELDS, type RawRead, type ReadLimits } from './snapshot.ts';

type PipelineResult = [Error | null, unknown][] | null;

function values(res: PipelineResult): unknown[] {
  if (!res) throw new Error('the Redis pipeline was not run');
  return res.map(([err, v]) => {
    if (err) throw err;
    return v;
  });
}

export async function readRawByPipelines(redis: Redis, namespace: string, limits: ReadLimits, dayNames: string[]): Promise<RawRead> {
  const k = (key: string) => (namespace ? `${namespace}:${key}` : key);
  const first = redis
    .pipeline()
    .smembers(k('queues'))
    .smembers(k('processes'))
    .get(k('stat:processed'))
    .get(k('stat:failed'))
    .zcard(k('retry'))
    .zcard(k('schedule'))
    .zcard(k('dead'));
  if (dayNames.length) first.mget(dayNames.map((d) => k(`stat:processed:${d}`))).mget(dayNames.map((d) => k(`stat:failed:${d}`)));
  const head = values(await first.exec());
  const allQueues = (head[0] as string[]).sort(byteOrder);
  const allProcs = (head[1] as string[]).sort(byteOrder);
  const queueNames = allQueues.slice(0, limits.maxQueues);
  const identities = allProcs.slice(0, limits.maxProcesses);

  const second = redis.pipeline();
  for (const q of queueNames) second.llen(k(`queue:${q}`)).lindex(k(`queue:${q}`), -1);
  for (const id of identities) second.hmget(k(id), ...PROCESS_FIELDS);
  const rest = queueNames.length + identities.length ? values(await second.exec()) : [];
  return {
    processed: head[2] as string | null,
    failed: head[3] as string | null,
    retrySize: head[4] as number,
    scheduledSize: head[5] as number,
    deadSize: head[6] as number,
    daysProcessed: (head[7] as (string | null)[] | undefined) ?? [],
    daysFailed: (head[8] as (string | null)[] | undefined) ?? [],
    queuesTotal: allQueues.length,
    processesTotal: allProcs.length,
    queues: queueNames.map((name, i) => ({ name, size: rest[2 * i] as number, tail: rest[2 * i + 1] as string | null })),
    processes: identities.map((identity, i) => ({ identity, fields: rest[2 * queueNames.length + i] as (string | null)[] })),
  };
}
