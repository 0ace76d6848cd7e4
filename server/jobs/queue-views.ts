// What the control API shows of the queues (Sidekiq Web's Queues and queue pages), from wherever
// the truth is. QueueViews reads the job system's memory, which holds every waiting job when the
// backend is this process's alone (mirror-dispatch.ts), and the demo's memory queues always. A
// shared backend's durable queues are read from it instead (shared-queue-views.ts).
import type { Awaitable } from './backend.ts';
import type { JobQueue } from './queue.ts';
import type { Topology } from './topology.ts';
import type { Job } from './types.ts';

/**
 * Who made the queue: `jobscope` (a built-in kind's queue, one made for synthetic jobs, the demo
 * load's) or, on Redis only, `sidekiq_app`: a queue a Sidekiq app pushed to that no Jobscope server created.
 */
export type QueueOrigin = 'jobscope' | 'sidekiq_app';

/** One queue as the views show it. */
export interface QueueState {
  name: string;
  origin: QueueOrigin;
  /** False for the demo's memory queues. */
  durable: boolean;
  backlog: number;
  /** Whole seconds the oldest waiting job has waited (Sidekiq's `latency.to_i`), 0 when empty. */
  latency: number;
  /** Epoch ms; null when empty. */
  oldestEnqueuedAt: number | null;
  /** Worker processes serving it. */
  processes: number;
  builtin: boolean;
}

/**
 * Why DELETE /jobs/queues/:name refuses this queue (the 409's message), or null when it deletes it.
 * The one rule: the control API checks it before deleting, and the queue views carry its answer so
 * the UI offers Delete exactly where the server accepts it. A Sidekiq app's jobs are real work: its
 * queue is only forgotten while empty. (On Redis the backend checks emptiness again atomically, for
 * an app that pushes in between, and answers the same sentence.)
 */
export function deleteRefusal(q: Pick<QueueState, 'name' | 'origin' | 'durable' | 'builtin' | 'backlog'>): string | null {
  if (!q.durable) return demoQueueRefusal(q.name);
  if (q.builtin) return builtinQueueRefusal(q.name);
  if (q.origin === 'sidekiq_app' && q.backlog > 0) return heldByAppRefusal(q.name, q.backlog);
  return null;
}

// The refusals' words, also used by JobSystem.deleteQueue when the queue changed between the view
// and the delete (an app pushed meanwhile): one text per rule, whichever side says it.
export function demoQueueRefusal(name: string): string {
  return `queue "${name}" belongs to the demo load generator; stop the demo load (DELETE /api/v3/sim/load) to remove it`;
}

export function builtinQueueRefusal(name: string): string {
  return `queue "${name}" is a built-in queue of Jobscope's own jobs and cannot be deleted`;
}

export function heldByAppRefusal(name: string, jobs: number): string {
  return `queue "${name}" holds ${jobs} job${jobs === 1 ? '' : 's'} of a Sidekiq app (Jobscope did not create it): Jobscope deletes such a queue only when it is empty; clear it in Sidekiq Web to drop its jobs`;
}

export interface QueueJobs {
  /** Jobs waiting in all (the page's X-Total). */
  total: number;
  /** The page, in the order workers take them. */
  jobs: Job[];
}

export interface QueueViewsDeps {
  topology: Topology;
  now(): number;
  isBuiltin(name: string): boolean;
}

export class QueueViews {
  constructor(protected readonly d: QueueViewsDeps) {}

  /** Every queue. */
  list(): Awaitable<QueueState[]> {
    const served = this.servedHere();
    return [...this.d.topology.queues()].map((q) => this.ofMemory(q, served));
  }

  /** One queue; undefined when there is none of that name. */
  one(name: string): Awaitable<QueueState | undefined> {
    const q = this.d.topology.queue(name);
    return q && this.ofMemory(q, this.servedHere());
  }

  /** A page of a queue's waiting jobs in the order workers take them; undefined when there is no such queue. */
  jobs(name: string, offset: number, limit: number): Awaitable<QueueJobs | undefined> {
    const q = this.d.topology.queue(name);
    return q && { total: q.backlog, jobs: q.peek(offset, limit) };
  }

  /** How many jobs wait in the queue now (0 when there is no such queue). */
  backlog(name: string): Awaitable<number> {
    return this.d.topology.queue(name)?.backlog ?? 0;
  }

  /** Pools of this process serving each queue: its own (durable queues) and the demo's simulated ones. */
  protected servedHere(): Map<string, number> {
    const served = new Map<string, number>();
    for (const p of this.d.topology.processes()) for (const name of p.queueNames()) served.set(name, (served.get(name) ?? 0) + 1);
    return served;
  }

  protected ofMemory(q: JobQueue, served: Map<string, number>): QueueState {
    return {
      name: q.name,
      origin: 'jobscope',
      durable: q.durable,
      backlog: q.backlog,
      latency: q.latency(this.d.now()),
      oldestEnqueuedAt: q.oldestEnqueuedAt(),
      processes: served.get(q.name) ?? 0,
      builtin: this.d.isBuiltin(q.name),
    };
  }
}
