// The queue views of `serve --redis` read from Redis as Sidekiq 6.4's API reads them (sidekiq/api.rb:
// Queue.all = SMEMBERS queues sorted, #size = LLEN, #latency from the entry at index -1, a queue's
// jobs = the list's entries), plus how many live processes list each queue in their heartbeat.
// Bounded: at most `maxQueues` names (Queue.all's byte order, as --sidekiq-max-queues caps a sidekiq
// connection), `maxProcesses` heartbeats and one LRANGE page per read; pipelined. Nothing is written.
import type { Redis } from 'ioredis';
import type { SharedQueue } from '../../jobs/backend.ts';
import { enqueuedAtOf, readSidekiq } from '../../sidekiq/read.ts';

/** Whose queues the views read: the limits, and this process's identity (counted from memory, not from its last beat). */
export interface QueueReadOptions {
  maxQueues: number;
  maxProcesses: number;
  self: string;
  now: () => number;
}

type PipelineResult = [Error | null, unknown][] | null;

function values(res: PipelineResult): unknown[] {
  if (!res) throw new Error('the Redis pipeline was not run');
  return res.map(([err, v]) => {
    if (err) throw err;
    return v;
  });
}

const toMs = (epochS: number | null) => (epochS === null ? null : epochS * 1000);

function listsQueue(info: unknown, name: string): boolean {
  if (typeof info !== 'string') return false;
  try {
    const queues = (JSON.parse(info) as { queues?: unknown } | null)?.queues;
    return Array.isArray(queues) && queues.includes(name);
  } catch {
    return false;
  }
}

/** Every queue as Queue.all lists it, read with the metrics' own reader so both views agree. */
export async function readQueueList(redis: Redis, o: QueueReadOptions): Promise<{ queues: SharedQueue[]; total: number }> {
  const s = await readSidekiq(redis, '', { maxQueues: o.maxQueues, maxProcesses: o.maxProcesses, days: 1 }, o.now);
  const serving = new Map<string, number>();
  for (const p of s.processes) {
    if (p.identity === o.self) continue;
    for (const q of new Set(p.info.queues)) serving.set(q, (serving.get(q) ?? 0) + 1);
  }
  // Read after the snapshot: a queue Jobscope creates is added to both sets in one MULTI, so any
  // such queue the snapshot lists is in this set by now (unless deleted since, when it no longer matters).
  const ours = new Set(await redis.smembers('jobscope:queues'));
  const queues = s.queues.map((q) => ({
    name: q.name,
    size: q.size,
    oldestEnqueuedAt: toMs(q.oldestEnqueuedAt),
    otherProcesses: serving.get(q.name) ?? 0,
    createdByJobscope: ours.has(q.name),
  }));
  return { queues, total: s.queuesTotal };
}

/** One queue in two pipelines: membership, LLEN, LINDEX -1 and the process set, then the heartbeats. */
export async function readQueue(redis: Redis, name: string, o: QueueReadOptions): Promise<SharedQueue | null> {
  const key = `queue:${name}`;
  const [listed, ours, size, oldest, procs] = values(
    await redis.pipeline().sismember('queues', name).sismember('jobscope:queues', name).llen(key).lindex(key, -1).smembers('processes').exec(),
  );
  if (listed === 0 && ours === 0 && size === 0) return null;
  const others = (procs as string[]).filter((id) => id !== o.self).sort().slice(0, o.maxProcesses);
  let otherProcesses = 0;
  if (others.length > 0) {
    const p = redis.pipeline();
    for (const id of others) p.hget(id, 'info');
    // A process whose hash expired is dead (Sidekiq's ProcessSet skips it): its info is null here.
    for (const info of values(await p.exec())) if (listsQueue(info, name)) otherProcesses++;
  }
  return { name, size: size as number, oldestEnqueuedAt: toMs(enqueuedAtOf(oldest as string | null)), otherProcesses, createdByJobscope: ours === 1 };
}

/**
 * A page of a queue's entries in the order workers take them: Sidekiq's client LPUSHes and its
 * fetch BRPOPs (Jobscope's LMOVEs RIGHT), so the page is counted from the right end and reversed.
 * Size and page come from one MULTI: X-Total and the rows describe the same moment.
 */
export async function readQueuePage(redis: Redis, name: string, offset: number, limit: number): Promise<{ total: number; entries: string[] } | null> {
  const key = `queue:${name}`;
  const [listed, ours, total, entries] = values(
    await redis.multi().sismember('queues', name).sismember('jobscope:queues', name).llen(key).lrange(key, -(offset + limit), -(offset + 1)).exec(),
  );
  if (listed === 0 && ours === 0 && total === 0) return null;
  return { total: total as number, entries: (entries as string[]).reverse() };
}
