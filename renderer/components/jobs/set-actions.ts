// The Retries, Scheduled and Dead pages' actions (JobSetPanel's) over the action routes: the same
// calls and words for this server's job system and a sidekiq connection that allows changes.
// Selected entries are acted on one at a time, as Sidekiq Web does; one already gone is counted
// as such, not as a failure.
import type { Client } from '../../api/client.ts';
import { ApiError } from '../../api/http.ts';
import { jobActionsApi, type ActionDone, type ActionSet } from '../../api/job-actions.ts';
import type { JobSetActions } from './JobSetPanel.tsx';

const plural = (n: number) => `${n} job${n === 1 ? '' : 's'}`;
const gone = (missing: number) => (missing ? ` (${plural(missing)} had already left the set)` : '');
const left = (d: ActionDone) => (d.left ? `; ${plural(d.left)} left in the set (no job to run, or time ran out: try again)` : '');

/** Acts on each key; answers how many were done and how many were gone already (404). */
async function each(keys: string[], act: (key: string) => Promise<unknown>): Promise<{ done: number; missing: number }> {
  let done = 0;
  let missing = 0;
  for (const key of keys) {
    try {
      await act(key);
      done++;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) missing++;
      else throw err;
    }
  }
  return { done, missing };
}

export function setActions(client: Client, connId: string, set: ActionSet, opts: { kill: boolean }, after: (text: string) => Promise<string>): JobSetActions {
  const retried = (n: number, more: string) =>
    set === 'dead' ? `Retried ${plural(n)}: back in their queues${more}.` : set === 'schedule' ? `Added ${plural(n)} to their queues now${more}.` : `Retried ${plural(n)} now${more}.`;
  const verb = set === 'schedule' ? 'enqueue' : 'retry';
  return {
    retry: async (keys) => after(((r) => retried(r.done, gone(r.missing)))(await each(keys, (k) => jobActionsApi.entry(client, connId, set, k, verb)))),
    remove: async (keys) => after(((r) => `Deleted ${plural(r.done)}${gone(r.missing)}.`)(await each(keys, (k) => jobActionsApi.deleteEntry(client, connId, set, k)))),
    retryAll: async () => after(((d) => retried(d.count, left(d)))(await jobActionsApi.all(client, connId, set, 'retry'))),
    removeAll: async () => after(`Deleted ${plural((await jobActionsApi.deleteAll(client, connId, set)).count)}.`),
    killAll: opts.kill ? async () => after(((d) => `Killed ${plural(d.count)}: moved to the dead set${left(d)}.`)(await jobActionsApi.all(client, connId, set, 'kill'))) : undefined,
  };
}
