// The embedded job system's queues, retry set and dead set (/api/v3/sim/jobs…), as Sidekiq Web
// shows them: typed calls over the one Client. Types from the server's contract only. Acting on
// the sets goes through the action routes every connection shares (job-actions.ts).
import type { ActedOn, DeletedQueue, FailedJobView, QueuedJobView, QueueView } from '../../contract/jobs.ts';
import type { Client, Page } from './client.ts';

export type { ActedOn, DeletedQueue, FailedJobView, QueuedJobView, QueueView };

const BASE = '/api/v3/sim/jobs';
const q = (name: string) => `${BASE}/queues/${encodeURIComponent(name)}`;

export const jobsApi = {
  queues: (c: Client) => c.json<QueueView[]>('GET', `${BASE}/queues`),
  queue: (c: Client, name: string) => c.json<QueueView>('GET', q(name)),
  /** The queue's waiting jobs in the order workers take them. */
  queueJobs: (c: Client, name: string, page: number, perPage: number): Promise<Page<QueuedJobView>> => c.page<QueuedJobView>(`${q(name)}/jobs`, page, perPage),
  deleteQueue: (c: Client, name: string) => c.json<DeletedQueue>('DELETE', q(name)),

  retries: (c: Client, page: number, perPage: number): Promise<Page<FailedJobView>> => c.page<FailedJobView>(`${BASE}/retries`, page, perPage),

  dead: (c: Client, page: number, perPage: number): Promise<Page<FailedJobView>> => c.page<FailedJobView>(`${BASE}/dead`, page, perPage),
};
