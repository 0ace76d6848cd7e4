// Finding one job in a Sidekiq's Redis, as Sidekiq Web does: a sorted-set entry by its key
// `<score>-<jid>` (every entry at that score, then the one whose jid matches: SortedSet#fetch) and a
// queued job by jid, a page of LRANGE at a time so a long queue never costs the Redis one long
// command. The job pages and the actions both look jobs up this way.
import type { Redis } from 'ioredis';

/** Entries sharing one score looked at: jobs pushed in one batch share it; thousands would be someone's bug. */
const SAME_SCORE_MAX = 1000;

/** A stored entry's JSON object, or null when the entry is no job (Sidekiq Web still lists those). */
export function jobObject(raw: string): Record<string, unknown> | null {
  try {
    const j: unknown = JSON.parse(raw);
    return j && typeof j === 'object' && !Array.isArray(j) ? (j as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Whether a stored entry is the job `jid`, without parsing entries that cannot hold it. An entry that
 *  is no job (or has no string jid) answers to '' (Sidekiq Web's key for it ends in "-"). */
export function isJob(raw: string, jid: string): boolean {
  if (jid !== '' && !raw.includes(jid)) return false;
  const j = jobObject(raw)?.jid;
  return (typeof j === 'string' ? j : '') === jid;
}

/** The entry of sorted set `key` at `score` that is the job `jid`, or undefined. */
export async function entryAt(r: Redis, key: string, score: string, jid: string): Promise<string | undefined> {
  const members = await r.zrangebyscore(key, score, score, 'LIMIT', 0, SAME_SCORE_MAX);
  return members.find((m) => isJob(m, jid));
}

/** The queued job `jid` of list `key`, read `page` entries at a time among the first `max`: the entry,
 *  null when the list ended without it, or `gaveUp` when the list goes on past `max`. */
export async function queuedJob(r: Redis, key: string, jid: string, { page, max }: { page: number; max: number }): Promise<string | null | { gaveUp: true }> {
  for (let start = 0; start < max; start += page) {
    const asked = Math.min(page, max - start);
    const entries = await r.lrange(key, start, start + asked - 1);
    const raw = entries.find((m) => isJob(m, jid));
    if (raw !== undefined) return raw;
    if (entries.length < asked) return null;
  }
  return (await r.llen(key)) > max ? { gaveUp: true } : null;
}
