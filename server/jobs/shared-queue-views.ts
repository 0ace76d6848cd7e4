// The queue views over a shared backend (Redis, PostgreSQL). This process's memory does not hold
// the waiting jobs there (they are fetched from the backend, and other servers and Sidekiq apps push
// and take there): durable queues are read from the backend as Sidekiq's API reads them, so Jobscope
// and Sidekiq show the same sizes, latencies and jobs; the demo's memory queues stay in memory.
import type { Awaitable, SharedJobBackend, SharedQueue } from './backend.ts';
import { QueueViews, type QueueJobs, type QueueState, type QueueViewsDeps } from './queue-views.ts';

export class SharedQueueViews extends QueueViews {
  constructor(
    d: QueueViewsDeps,
    private readonly backend: SharedJobBackend,
  ) {
    super(d);
  }

  /** Sidekiq's Queue.all (queues only a Sidekiq app serves included), then the demo's. */
  override list(): Awaitable<QueueState[]> {
    const served = this.servedHere();
    const memory = [...this.d.topology.queues()].filter((q) => !q.durable);
    const memoryNames = new Set(memory.map((q) => q.name));
    return this.backend.queueList().then(({ queues }) => [
      ...queues.filter((q) => !memoryNames.has(q.name)).map((q) => this.ofShared(q, served)),
      ...memory.map((q) => this.ofMemory(q, served)),
    ]);
  }

  override one(name: string): Awaitable<QueueState | undefined> {
    if (this.isMemory(name)) return super.one(name);
    return this.backend.queueInfo(name).then((r) => (r ? this.ofShared(r, this.servedHere()) : undefined));
  }

  override jobs(name: string, offset: number, limit: number): Awaitable<QueueJobs | undefined> {
    if (this.isMemory(name)) return super.jobs(name, offset, limit);
    return this.backend.queuePage(name, offset, limit).then((page) => page ?? undefined);
  }

  override backlog(name: string): Awaitable<number> {
    if (this.isMemory(name)) return super.backlog(name);
    return this.backend.queueSize(name);
  }

  private isMemory(name: string): boolean {
    return this.d.topology.queue(name)?.durable === false;
  }

  /**
   * Processes: this server's own pool counted from memory (its heartbeat lists a new queue only at
   * the next beat), every other live process from its heartbeat in the backend. Latency is clamped
   * at 0 as the memory view's (a job enqueued by a host whose clock runs ahead is not "-2 s late").
   */
  private ofShared(q: SharedQueue, served: Map<string, number>): QueueState {
    const builtin = this.d.isBuiltin(q.name);
    return {
      name: q.name,
      origin: builtin || q.createdByJobscope ? 'jobscope' : 'sidekiq_app',
      durable: true,
      backlog: q.size,
      latency: q.oldestEnqueuedAt === null ? 0 : Math.max(0, Math.trunc((this.d.now() - q.oldestEnqueuedAt) / 1000)),
      oldestEnqueuedAt: q.oldestEnqueuedAt,
      processes: q.otherProcesses + (served.get(q.name) ?? 0),
      builtin,
    };
  }
}
