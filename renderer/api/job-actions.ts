// Actions on a connection's jobs and processes (/api/app/connections/:id/jobs/…, processes/…):
// the same calls for this server's job system and for a sidekiq connection that allows changes.
// Types from the server's contract only.
import type { ActionDone, ActionSet } from '../../contract/job-actions.ts';
import type { Client } from './client.ts';

export type { ActionDone, ActionSet };

const base = (connId: string) => `/api/app/connections/${encodeURIComponent(connId)}`;
const entry = (connId: string, set: ActionSet, key: string) => `${base(connId)}/jobs/sets/${set}/${encodeURIComponent(key)}`;

export const jobActionsApi = {
  /** retry: into its queue now (retry, dead); kill: into the dead set (retry, schedule); enqueue: a scheduled job into its queue now. */
  entry: (c: Client, connId: string, set: ActionSet, key: string, action: 'retry' | 'kill' | 'enqueue') => c.json<ActionDone>('POST', `${entry(connId, set, key)}/${action}`),
  deleteEntry: (c: Client, connId: string, set: ActionSet, key: string) => c.json<ActionDone>('DELETE', entry(connId, set, key)),
  all: (c: Client, connId: string, set: ActionSet, action: 'retry' | 'kill') => c.json<ActionDone>('POST', `${base(connId)}/jobs/sets/${set}/all/${action}`),
  deleteAll: (c: Client, connId: string, set: ActionSet) => c.json<ActionDone>('DELETE', `${base(connId)}/jobs/sets/${set}`),
  deleteQueued: (c: Client, connId: string, queue: string, jid: string) =>
    c.json<ActionDone>('DELETE', `${base(connId)}/jobs/queues/${encodeURIComponent(queue)}/${encodeURIComponent(jid)}`),
  clearQueue: (c: Client, connId: string, queue: string) => c.json<ActionDone>('DELETE', `${base(connId)}/jobs/queues/${encodeURIComponent(queue)}`),
  process: (c: Client, connId: string, identity: string, action: 'quiet' | 'stop') => c.json<ActionDone>('POST', `${base(connId)}/processes/${encodeURIComponent(identity)}/${action}`),
};
