// Deleting a queue of the job system by the rule its views show (queue-views.ts's deleteRefusal),
// checked again by the job system at the moment of deleting for what changed in between (an app's
// push on Redis): what the control API's DELETE and the app API's "clear queue" share.
import type { JobSystem } from './job-system.ts';
import { deleteRefusal } from './queue-views.ts';
import { QueueKindError } from './queue-errors.ts';

/** The jobs dropped; undefined when there is no such queue; QueueKindError when the rule refuses. */
export async function deleteQueueByRule(jobs: JobSystem, name: string): Promise<{ dropped: number } | undefined> {
  const seen = await jobs.views.one(name);
  const refusal = seen && deleteRefusal(seen);
  if (refusal) throw new QueueKindError(refusal);
  return jobs.deleteQueue(name);
}
