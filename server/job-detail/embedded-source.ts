// Job pages on this server's own job system (SQLite, PostgreSQL or --redis): entries found the way
// its retry and delete find them (by key), queued jobs a page at a time from its queue views. A job
// kept in Redis answers its stored payload; a row is written out in Sidekiq's payload shape, so one
// reader (record.ts) makes the answer for every backend.
import type { JobDetailSet } from '../../contract/job-detail.ts';
import { splitError } from '../control-api/job-sets.ts';
import type { JobSystem } from '../jobs/job-system.ts';
import type { FailedJob, Job } from '../jobs/types.ts';
import type { Found } from './record.ts';
import { NoSuchSet, type GaveUp, type JobDetailSource } from './source.ts';

const PAGE = 100;

const seconds = (ms: number | null | undefined) => (typeof ms === 'number' && ms > 0 ? ms / 1000 : undefined);

/**
 * A row's job as the Redis backend would have stored it (store/redis/job-backend.ts), so both
 * backends answer alike: args wrapped in an array, Sidekiq's retry_count (failures - 1 once a retry
 * is scheduled: Jobscope counts that retry already), failed_at the first failure where it is known.
 */
function payloadOf(j: Job | FailedJob, set: JobDetailSet | 'queue'): string {
  const f = j as Partial<FailedJob>;
  // Failed before: a set's entry, or a job its retry put back into its queue (rows answer failed_at null when none).
  const failed = (f.failed_at !== undefined && f.failed_at !== null) || j.retry_count > 0;
  return JSON.stringify({
    class: j.class,
    args: [j.args],
    queue: j.queue,
    jid: j.jid ?? String(j.id),
    retry: j.retry,
    created_at: seconds(j.created_at),
    enqueued_at: seconds(j.enqueued_at),
    ...(failed
      ? {
          retry_count: set === 'dead' ? j.retry_count : Math.max(0, j.retry_count - 1),
          failed_at: seconds(j.first_failed_at ?? f.failed_at),
          retried_at: j.retry_count > 1 ? seconds(f.failed_at) : undefined,
          ...splitError(f.error ?? null),
        }
      : {}),
  });
}

const stored = (j: Job, set: JobDetailSet | 'queue') => j.raw ?? payloadOf(j, set);

export class EmbeddedJobDetails implements JobDetailSource {
  constructor(
    private readonly jobs: JobSystem,
    private readonly searchMax: number,
  ) {}

  async entry(set: JobDetailSet, key: string, score: number): Promise<Found | null> {
    if (set === 'schedule') throw new NoSuchSet("this server's job system schedules no jobs for later: it has no scheduled set");
    const [job] = await this.jobs.entriesNamed(set, key);
    return job ? { raw: stored(job, set), where: set, key, score, now: this.jobs.now() } : null;
  }

  async queued(queue: string, jid: string): Promise<Found | GaveUp | null> {
    for (let offset = 0; offset < this.searchMax; offset += PAGE) {
      const asked = Math.min(PAGE, this.searchMax - offset);
      const page = await this.jobs.views.jobs(queue, offset, asked);
      if (!page) return null;
      // A Redis job by its jid, a row by its id (what the queue page lists), or either by the other.
      const job = page.jobs.find((j) => j.jid === jid || String(j.id) === jid);
      if (job) return { raw: stored(job, 'queue'), where: 'queue', key: null, score: null, now: this.jobs.now() };
      if (page.jobs.length < asked) return null;
      if (offset + asked >= this.searchMax && page.total > this.searchMax) return { gaveUpAfter: this.searchMax };
    }
    return null;
  }
}
