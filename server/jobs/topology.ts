// Which queues exist and which worker pools serve them. Durable queues are served by the server's
// own pool; memory queues (the demo load's) only by the pools created with them. Knows nothing of
// storage: creating a durable queue's record is the job system's part.
import { JobQueue } from './queue.ts';
import { WorkerPool, type PoolIdentity } from './worker-pool.ts';
import type { Job } from './types.ts';

export class Topology {
  private readonly queueMap = new Map<string, JobQueue>();
  private readonly servedBy = new Map<string, Set<WorkerPool>>();
  private readonly pools: WorkerPool[] = [];
  private memoryQueues = 0;

  constructor(
    private readonly now: () => number,
    private readonly runJob: (job: Job, from: JobQueue) => Promise<void>,
  ) {}

  queues(): IterableIterator<JobQueue> {
    return this.queueMap.values();
  }

  queue(name: string): JobQueue | undefined {
    return this.queueMap.get(name);
  }

  /** Durable queues only: what --max-queues bounds. */
  get durableCount(): number {
    return this.queueMap.size - this.memoryQueues;
  }

  processes(): readonly WorkerPool[] {
    return this.pools;
  }

  /** A new queue, not yet served by any pool. */
  create(name: string, durable: boolean): JobQueue {
    const q = new JobQueue(name, durable, this.now);
    this.queueMap.set(name, q);
    if (!durable) this.memoryQueues++;
    return q;
  }

  /** Removes the queue from every pool and the list; its waiting jobs go with it. */
  remove(q: JobQueue): Job[] {
    const dropped = q.drain();
    if (!q.durable) this.memoryQueues--;
    for (const p of this.servedBy.get(q.name) ?? []) p.unserve(q);
    this.servedBy.delete(q.name);
    this.queueMap.delete(q.name);
    return dropped;
  }

  addPool(identity: PoolIdentity, queues: JobQueue[] = []): WorkerPool {
    const pool = new WorkerPool(identity, this.runJob, identity.startedAt ?? this.now(), this.now);
    this.pools.push(pool);
    for (const q of queues) this.attach(pool, q);
    return pool;
  }

  /** Takes a pool out of the process list; its running jobs finish, it takes no new ones. */
  removePool(pool: WorkerPool): void {
    pool.stop();
    const i = this.pools.indexOf(pool);
    if (i >= 0) this.pools.splice(i, 1);
    for (const name of pool.queueNames()) this.servedBy.get(name)?.delete(pool);
  }

  attach(pool: WorkerPool, q: JobQueue): void {
    pool.serve(q);
    let set = this.servedBy.get(q.name);
    if (!set) this.servedBy.set(q.name, (set = new Set()));
    set.add(pool);
  }

  /** Lets the pools serving the queue take its jobs, stopping once it is empty. */
  wake(queue: string): void {
    const q = this.queueMap.get(queue);
    for (const p of this.servedBy.get(queue) ?? []) {
      p.wake();
      if (!q || q.backlog === 0) return;
    }
  }

  wakeAll(): void {
    for (const p of this.pools) p.wake();
  }

  stopAll(): void {
    for (const p of this.pools) p.stop();
  }
}
