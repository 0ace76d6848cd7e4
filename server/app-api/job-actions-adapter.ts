// What a job system does for the action routes (job-actions.ts); each adapter hands the call on to
// its backend and raises jobs/action-errors.ts's refusals.
import type { ActionSet } from '../../contract/job-actions.ts';

export type EntryAction = 'retry' | 'kill' | 'enqueue' | 'delete';

export interface JobActionsAdapter {
  entry(set: ActionSet, key: string, action: EntryAction): Promise<void>;
  all(set: ActionSet, action: 'retry' | 'kill' | 'delete'): Promise<{ count: number; left: number }>;
  deleteQueued(queue: string, jid: string): Promise<void>;
  /** Answers how many jobs the queue held. */
  clearQueue(queue: string): Promise<number>;
  signal(identity: string, action: 'quiet' | 'stop'): Promise<void>;
}
