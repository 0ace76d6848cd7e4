// How an entry of the retry or the dead set is named: as Sidekiq Web names it, `<score>-<jid>`
// (Sidekiq::SortedEntry#key; Web splits on the first "-" and finds the entry with ZRANGEBYSCORE
// score score, then compares the jid). Several entries may share a jid (one job failing twice) or a
// score; the pair tells them apart, and any jid string works. Backends whose entries are rows
// (SQLite, PostgreSQL) answer the same form with the row id in the jid's place.
import type { FailedJob } from './types.ts';

export type FailedSet = 'retry' | 'dead';

/** A key as given: Sidekiq Web's pair, or an old numeric id (still exact for rows). */
export type EntryKey = { score: number; jid: string } | { id: number };

/** Ruby's Float#to_s for the scores Sidekiq writes (so a key copied from Sidekiq Web's URL is ours too). */
export function scoreText(score: number): string {
  return Number.isInteger(score) && Math.abs(score) < 1e16 ? `${score}.0` : String(score);
}

/** The entry's score: the sorted set's (Redis), else when it runs again (retry) or died (dead), epoch s. */
export function scoreOf(job: FailedJob, set: FailedSet): number {
  if (job.score !== undefined) return job.score;
  return ((set === 'retry' ? job.run_at : job.failed_at) ?? 0) / 1000;
}

export function keyOf(job: FailedJob, set: FailedSet): string {
  return `${scoreText(scoreOf(job, set))}-${job.jid ?? String(job.id)}`;
}

/** A key's text as an EntryKey; null when it is neither a number nor `<score>-<jid>` with a finite score. */
export function parseEntryKey(key: string | number): EntryKey | null {
  if (typeof key === 'number') return Number.isSafeInteger(key) && key > 0 ? { id: key } : null;
  const dash = key.indexOf('-');
  if (dash < 1) return null;
  const scoreStr = key.slice(0, dash);
  const score = Number(scoreStr);
  if (scoreStr.trim() === '' || !Number.isFinite(score)) return null;
  return { score, jid: key.slice(dash + 1) };
}

/** Whether the entry is the one the key names. */
export function entryMatches(job: FailedJob, key: EntryKey, set: FailedSet, idOf: (job: FailedJob) => number = (j) => j.id): boolean {
  if ('id' in key) return idOf(job) === key.id;
  return scoreOf(job, set) === key.score && (job.jid ?? String(job.id)) === key.jid;
}
