// The action routes' adapter for this server's job system: each call hands on to the job system's
// own retry and dead set actions and its queue deletion (SQLite, or Redis with --redis, behind its
// backend port), as the control API's /api/v3/sim/jobs routes do.
import type { ActionSet } from '../../contract/job-actions.ts';
import type { JobSystem } from '../jobs/job-system.ts';
import type { Acted } from '../jobs/failed-set-actions.ts';
import { CannotAct, NotOffered, NotThere } from '../jobs/action-errors.ts';
import { deleteQueueByRule } from '../jobs/delete-queue.ts';
import type { JobActionsAdapter } from './job-actions-adapter.ts';

const NO_SCHEDULE = "this server's job system has no scheduled set: its jobs are queued when pushed";

function failedSet(set: ActionSet): 'retry' | 'dead' {
  if (set === 'schedule') throw new NotOffered(NO_SCHEDULE);
  return set;
}

function found(acted: Acted | number, set: 'retry' | 'dead', key: string): void {
  const count = typeof acted === 'number' ? acted : acted.count;
  if (count === 0) throw new NotThere(`entry ${key} is no longer in the ${set === 'retry' ? 'retry' : 'dead'} set (retried or deleted meanwhile): reload the list`);
}

const noKill = () => new CannotAct('the job is dead already: retry it or delete it');

export function embeddedActions(jobs: JobSystem): JobActionsAdapter {
  const size = async (set: 'retry' | 'dead') => (set === 'retry' ? (await jobs.retries()).length : await jobs.deadSize());
  return {
    async entry(s, key, action) {
      const set = failedSet(s);
      if (action === 'kill') {
        if (set === 'dead') throw noKill();
        return found(await jobs.killRetries([key]), set, key);
      }
      if (action === 'enqueue') throw new NotOffered(`${NO_SCHEDULE}; a failed job goes back with retry`);
      if (action === 'delete') return found(await (set === 'retry' ? jobs.deleteRetries([key]) : jobs.deleteDead([key])), set, key);
      found(await (set === 'retry' ? jobs.retryNow([key]) : jobs.retryDead([key])), set, key);
    },
    async all(s, action) {
      const set = failedSet(s);
      let count: number;
      if (action === 'kill') {
        if (set === 'dead') throw noKill();
        count = (await jobs.killRetries()).count;
      } else if (action === 'delete') count = await (set === 'retry' ? jobs.clearRetries() : jobs.clearDead());
      else count = set === 'retry' ? (await jobs.retryNow()).count : await jobs.retryDead();
      return { count, left: await size(set) };
    },
    deleteQueued() {
      return Promise.reject(new NotOffered("this server's job system deletes whole queues, not single waiting jobs: clear the queue instead"));
    },
    async clearQueue(queue) {
      const done = await deleteQueueByRule(jobs, queue);
      if (!done) throw new NotThere(`there is no queue ${queue}`);
      return done.dropped;
    },
    signal() {
      return Promise.reject(new NotOffered("this server's workers stop with the server: stop or restart it from where it runs"));
    },
  };
}
