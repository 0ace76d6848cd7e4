// A job's page: one call for every connection that has jobs (/api/app/connections/:id/jobs/…),
// typed by the server's contract.
import type { JobDetail } from '../../contract/job-detail.ts';
import type { Client } from './client.ts';

export type { JobDetail };

/** What a job page shows: an entry of a sorted set by its key, or a queued job by its jid. */
export type JobTarget = { set: 'retry' | 'schedule' | 'dead'; key: string } | { queue: string; jid: string };

export function jobDetail(c: Client, connectionId: string, t: JobTarget): Promise<JobDetail> {
  const base = `/api/app/connections/${encodeURIComponent(connectionId)}/jobs`;
  const path = 'set' in t ? `/sets/${t.set}/${encodeURIComponent(t.key)}` : `/queues/${encodeURIComponent(t.queue)}/${encodeURIComponent(t.jid)}`;
  return c.json<JobDetail>('GET', base + path);
}

/** The job page's route for a target (`#/job/<set>/<key>`, `#/job/queue/<queue>/<jid>`). */
export function jobHref(t: JobTarget): string {
  return 'set' in t ? `#/job/${t.set}/${encodeURIComponent(t.key)}` : `#/job/queue/${encodeURIComponent(t.queue)}/${encodeURIComponent(t.jid)}`;
}

/** A job page's route parts (after `job/`) as its target; null when they name none. */
export function targetOf(rest: string[]): JobTarget | null {
  const [where, a, b] = rest;
  if ((where === 'retry' || where === 'schedule' || where === 'dead') && a && rest.length === 2) return { set: where, key: a };
  if (where === 'queue' && a && b && rest.length === 3) return { queue: a, jid: b };
  return null;
}
