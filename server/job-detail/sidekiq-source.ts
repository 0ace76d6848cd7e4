// Job pages on a sidekiq connection: read-only, as Sidekiq Web finds them. A set entry by its key is
// ZRANGEBYSCORE score score (every entry sharing that score, bounded) and the one whose jid matches
// (SortedSet#fetch); a queued job is looked for a page of LRANGE at a time, so a long queue never
// costs the Redis one long command, and the search stops at the configured bound.
import type { Redis } from 'ioredis';
import type { JobDetailSet } from '../../contract/job-detail.ts';
import type { Found } from './record.ts';
import type { GaveUp, JobDetailSource } from './source.ts';

const PAGE = 100;
/** Entries sharing one score looked at: jobs pushed in one batch share it; thousands would be someone's bug. */
const SAME_SCORE_MAX = 1000;

type Read = <T>(fn: (r: Redis, namespace: string) => Promise<T>) => Promise<T>;

/** The jid of a stored entry, without parsing entries that cannot hold it; '' for an entry that is no job (Sidekiq Web's key ends in "-" then). */
function jidOf(entry: string, wanted: string): string | null {
  if (wanted !== '' && !entry.includes(wanted)) return null;
  try {
    const j: unknown = JSON.parse(entry);
    if (j && typeof j === 'object' && !Array.isArray(j)) {
      const jid = (j as { jid?: unknown }).jid;
      return typeof jid === 'string' ? jid : '';
    }
  } catch {
    /* no job: matched by the empty jid */
  }
  return '';
}

export class SidekiqJobDetails implements JobDetailSource {
  constructor(
    private readonly read: Read,
    private readonly searchMax: number,
    private readonly now: () => number,
  ) {}

  entry(set: JobDetailSet, key: string, score: number, jid: string): Promise<Found | null> {
    return this.read(async (r, ns) => {
      const members = await r.zrangebyscore(`${ns ? `${ns}:` : ''}${set}`, String(score), String(score), 'LIMIT', 0, SAME_SCORE_MAX);
      const raw = members.find((m) => jidOf(m, jid) === jid);
      return raw === undefined ? null : { raw, where: set, key, score, now: this.now() };
    });
  }

  queued(queue: string, jid: string): Promise<Found | GaveUp | null> {
    return this.read(async (r, ns) => {
      const list = `${ns ? `${ns}:` : ''}queue:${queue}`;
      for (let start = 0; start < this.searchMax; start += PAGE) {
        const asked = Math.min(PAGE, this.searchMax - start);
        const page = await r.lrange(list, start, start + asked - 1);
        const raw = page.find((m) => jidOf(m, jid) === jid);
        if (raw !== undefined) return { raw, where: 'queue', key: null, score: null, now: this.now() };
        if (page.length < asked) return null;
      }
      return (await r.llen(list)) > this.searchMax ? { gaveUpAfter: this.searchMax } : null;
    });
  }
}
