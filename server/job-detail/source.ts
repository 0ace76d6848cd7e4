// What a job page reads, whoever keeps the jobs: one interface, an adapter per kind of connection
// (embedded-source.ts: this server's job system; sidekiq-source.ts: a Sidekiq's Redis) that only
// hands the call on, so the routes and the answer are the same for both.
import type { JobDetailSet } from '../../contract/job-detail.ts';
import type { Found } from './record.ts';

/** A queued job that was not among the first `searched` jobs of its queue (the search's bound). */
export interface GaveUp {
  gaveUpAfter: number;
}

export interface JobDetailSource {
  /** The entry of the set with this score and jid; null when it is gone (retried, deleted, killed). */
  entry(set: JobDetailSet, key: string, score: number, jid: string): Promise<Found | null>;
  /** The queued job with this jid; null when the whole queue was searched, GaveUp past the bound. */
  queued(queue: string, jid: string): Promise<Found | GaveUp | null>;
}

/** Why an entry cannot be there at all (a set this kind of connection has not). */
export class NoSuchSet extends Error {}
