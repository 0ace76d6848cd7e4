// Job pages on a sidekiq connection: read-only, as Sidekiq Web finds them. A set entry by its key is
// ZRANGEBYSCORE score score (every entry sharing that score, bounded) and the one whose jid matches
// (SortedSet#fetch); a queued job is looked for a page of LRANGE at a time, so a long queue never
// costs the Redis one long command, and the search stops at the configured bound.
import type { Redis } from 'ioredis';
import type { JobDetailSet } from '../../contract/job-detail.ts';
import type { Found } from './record.ts';
import type { GaveUp, JobDetailSource } from './source.ts';
import { entryAt, queuedJob } from '../sidekiq/find-job.ts';

const PAGE = 100;

type Read = <T>(fn: (r: Redis, namespace: string) => Promise<T>) => Promise<T>;

export class SidekiqJobDetails implements JobDetailSource {
  constructor(
    private readonly read: Read,
    private readonly searchMax: number,
    private readonly now: () => number,
  ) {}

  entry(set: JobDetailSet, key: string, score: number, jid: string): Promise<Found | null> {
    return this.read(async (r, ns) => {
      const raw = await entryAt(r, `${ns ? `${ns}:` : ''}${set}`, String(score), jid);
      return raw === undefined ? null : { raw, where: set, key, score, now: this.now() };
    });
  }

  queued(queue: string, jid: string): Promise<Found | GaveUp | null> {
    return this.read(async (r, ns) => {
      const raw = await queuedJob(r, `${ns ? `${ns}:` : ''}queue:${queue}`, jid, { page: PAGE, max: this.searchMax });
      if (raw === null) return null;
      return typeof raw === 'string' ? { raw, where: 'queue', key: null, score: null, now: this.now() } : { gaveUpAfter: this.searchMax };
    });
  }
}
