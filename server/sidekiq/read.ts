// One read of a Sidekiq's Redis, as Sidekiq's own API reads it (sidekiq/api.rb 6.4: Stats,
// Queue.all, ProcessSet, Stats::History): the head (read-head.ts: counters, SCARD, names by SSCAN
// pages), then the kept queues and processes by the read script in bounded chunks when the Redis
// runs it, else by one pipeline. At most `maxQueues` queues and `maxProcesses` processes are read
// and kept per sample (the totals, from SCARD, say how many there are). Nothing is written.
import type { Redis } from 'ioredis';
import { readRawByPipelines } from './read-pipelines.ts';
import { readRawByScript } from './read-script.ts';
import { snapshotOf, utcDays, type ReadLimits, type SidekiqSnapshot } from './snapshot.ts';

export { enqueuedAtOf, rubyToF, rubyToI, utcDays } from './snapshot.ts';
export type { ProcessInfo, ReadLimits, SidekiqProcess, SidekiqQueue, SidekiqSnapshot } from './snapshot.ts';

/** After a refusal the script is tried again this much later (an admin may have allowed it since). */
export const SCRIPT_RETRY_MS = 10 * 60_000;

/** Whether this reader's Redis refused the script, why and when; each SidekiqSource keeps its own. */
export interface ScriptMemo {
  refused: { reason: string; at: number } | null;
}

const isReplyError = (err: unknown) => (err as Error | null)?.name === 'ReplyError';

export async function readByPipelines(redis: Redis, namespace: string, limits: ReadLimits, now: () => number, scriptRefused: string | null = null): Promise<SidekiqSnapshot> {
  const dayNames = utcDays(now(), limits.days);
  const raw = await readRawByPipelines(redis, namespace, limits, dayNames);
  return snapshotOf(raw, dayNames, now(), 'pipelines', scriptRefused);
}

export async function readByScript(redis: Redis, namespace: string, limits: ReadLimits, now: () => number): Promise<SidekiqSnapshot> {
  const dayNames = utcDays(now(), limits.days);
  const raw = await readRawByScript(redis, namespace, limits, dayNames);
  return snapshotOf(raw, dayNames, now(), 'script');
}

export async function readSidekiq(redis: Redis, namespace: string, limits: ReadLimits, now: () => number, memo: ScriptMemo = { refused: null }): Promise<SidekiqSnapshot> {
  const refused = memo.refused;
  if (refused && now() - refused.at < SCRIPT_RETRY_MS) return readByPipelines(redis, namespace, limits, now, refused.reason);
  try {
    const s = await readByScript(redis, namespace, limits, now);
    memo.refused = null;
    return s;
  } catch (err) {
    // A timeout or a closed connection is the Redis's problem, not the script's.
    if (!isReplyError(err)) throw err;
    // Redis answered with an error: an ACL without EVALSHA (NOPERM), a renamed command, a proxy
    // without scripts, or the data itself (WRONGTYPE). The plain reads tell which: if they fail too,
    // theirs is the error to show; if they work, the script was refused and is left alone a while.
    const s = await readByPipelines(redis, namespace, limits, now);
    const reason = String((err as Error).message).split('\n')[0]!.slice(0, 200);
    memo.refused = { reason, at: now() };
    return { ...s, scriptRefused: reason };
  }
}
