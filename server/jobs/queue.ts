// One named queue as the metrics see it: the jobs waiting in it, oldest first. The waiting jobs are
// mirrored in memory (durable ones are also rows in the store), so backlog and latency are read
// without touching the database, and taking a job is an array step, not a query.
import type { Job } from './types.ts';

export class JobQueue {
  private items: Job[] = [];
  private head = 0;
  /** Last push or take, epoch ms: an empty queue idle long enough may be forgotten. */
  lastActiveAt: number;

  constructor(
    readonly name: string,
    /** Durable queues keep their jobs in the backend; memory queues (the demo's) do not. */
    readonly durable: boolean,
    /** The job system's clock: idle time is measured on it. */
    private readonly now: () => number,
  ) {
    this.lastActiveAt = now();
  }

  get backlog(): number {
    return this.items.length - this.head;
  }

  /** Sidekiq's `latency.to_i`: whole seconds since the oldest waiting job was enqueued, 0 when empty. */
  latency(now: number): number {
    const oldest = this.items[this.head];
    return oldest ? Math.max(0, Math.floor((now - oldest.enqueued_at) / 1000)) : 0;
  }

  oldestEnqueuedAt(): number | null {
    return this.items[this.head]?.enqueued_at ?? null;
  }

  push(job: Job): void {
    this.lastActiveAt = this.now();
    this.items.push(job);
  }

  shift(): Job | undefined {
    if (this.head >= this.items.length) return undefined;
    const job = this.items[this.head]!;
    this.lastActiveAt = this.now();
    this.items[this.head++] = undefined as unknown as Job;
    // Compact now and then so a long-lived queue does not keep a growing hole at its front.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return job;
  }

  /** Waiting jobs in the order workers take them, `offset` of them skipped (Sidekiq Web's queue page). */
  peek(offset: number, limit: number): Job[] {
    const from = this.head + Math.max(0, offset);
    return this.items.slice(from, from + Math.max(0, limit));
  }

  /** Empties the queue; returns what was waiting. */
  drain(): Job[] {
    const out = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return out;
  }
}
