// A worker process as Sidekiq's API reports it: an identity, the queues it serves and a number of
// worker slots. Slots are filled whenever one frees up or a served queue gets a job, so `busy`
// never exceeds `concurrency` by construction.
import type { JobQueue } from './queue.ts';
import type { Job } from './types.ts';
import { WorkState } from './work-state.ts';

export interface PoolIdentity {
  hostname: string;
  pid: number;
  tag: string;
  labels: string[];
  concurrency: number;
  /** When the process started, if not when it joined: the demo's simulated processes have a past. */
  startedAt?: number;
}

export class WorkerPool {
  busy = 0;
  /** The jobs its slots run now (the Busy view; a shared backend's heartbeat). */
  readonly work = new WorkState();
  /** Bumped when the served queues change: lets readers cache what they derive from them. */
  version = 0;
  private readonly queues: JobQueue[] = [];
  private cursor = 0;
  private stopped = false;

  constructor(
    readonly identity: PoolIdentity,
    /** Runs one job to its end; must not reject. */
    private readonly runJob: (job: Job, from: JobQueue) => Promise<void>,
    readonly startedAt: number,
    private readonly now: () => number = Date.now,
  ) {}

  get concurrency(): number {
    return this.identity.concurrency;
  }

  serve(queue: JobQueue): void {
    if (!this.queues.includes(queue)) {
      this.queues.push(queue);
      this.version++;
    }
  }

  unserve(queue: JobQueue): void {
    const i = this.queues.indexOf(queue);
    if (i >= 0) {
      this.queues.splice(i, 1);
      this.version++;
    }
  }

  queueNames(): string[] {
    return this.queues.map((q) => q.name);
  }

  /** Fills free slots from the served queues. */
  wake(): void {
    while (!this.stopped && this.busy < this.identity.concurrency) {
      const taken = this.take();
      if (!taken) return;
      this.busy++;
      const slot = this.work.start(taken.job, this.now());
      void this.runJob(taken.job, taken.queue).finally(() => {
        this.work.end(slot);
        this.busy--;
        this.wakeSoon();
      });
    }
  }

  private refillQueued = false;

  // Refill from a macrotask, not from the finishing job's microtask: a queue of instant jobs would
  // otherwise drain in one unbroken microtask chain and keep the HTTP server from answering.
  private wakeSoon(): void {
    if (this.refillQueued) return;
    this.refillQueued = true;
    setImmediate(() => {
      this.refillQueued = false;
      this.wake();
    });
  }

  stop(): void {
    this.stopped = true;
  }

  // Round robin over the served queues, so one deep queue cannot starve the others (Sidekiq's
  // default fetch shuffles the queue order on every fetch for the same reason).
  private take(): { job: Job; queue: JobQueue } | undefined {
    const n = this.queues.length;
    for (let i = 0; i < n; i++) {
      const q = this.queues[(this.cursor + i) % n]!;
      if (q.backlog > 0) {
        this.cursor = (this.cursor + i + 1) % n;
        return { job: q.shift()!, queue: q };
      }
    }
    return undefined;
  }
}
