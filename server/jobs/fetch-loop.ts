// Taking work from a shared backend (Redis, PostgreSQL), as Sidekiq's processors do through their
// fetch: the pool's free slots are filled with jobs fetched in one round trip (reliable fetch: each
// sits in this process's working list until its end is written), then the loop idles a poll period
// once the queues ran short, unless poked meanwhile (a local enqueue, a freed slot, the stop).
import type { SharedJobBackend } from './backend.ts';
import type { DispatchHost } from './dispatch.ts';
import type { Job } from './types.ts';

export class FetchLoop {
  /** Wakes the loop from its idle wait. */
  private wakeUp: (() => void) | null = null;
  /** Set by poke(): a job was enqueued here or a slot freed while a fetch was out, so its short answer is stale. */
  private poked = false;

  constructor(
    private readonly host: DispatchHost,
    private readonly backend: SharedJobBackend,
    /** The queues to fetch from, in this fetch's order. */
    private readonly served: () => string[],
  ) {}

  poke(): void {
    this.poked = true;
    this.wakeUp?.();
  }

  async run(): Promise<void> {
    const { host, backend } = this;
    const pool = host.pool;
    const idleMs = Math.max(10, Math.min(host.config.jobPollMs, 1000));
    let outageWait = 100;
    while (!host.stopping()) {
      const free = pool.concurrency - pool.busy;
      // No timer: every freed slot pokes, and so does the stop.
      if (free <= 0) {
        await this.pause();
        continue;
      }
      this.poked = false;
      let jobs: Job[];
      try {
        jobs = await backend.fetch(this.served(), free);
        outageWait = 100;
      } catch (err) {
        // Fetching pauses through an outage and resumes by itself; waits grow to 2 s.
        host.warnUnlessOutage(err, 'could not fetch a job from Redis');
        await this.pause(outageWait);
        outageWait = Math.min(2000, outageWait * 2);
        continue;
      }
      // Taken during the stop: they stay in the working list, which leave() puts back into their queues.
      if (host.stopping()) break;
      for (const job of jobs) this.runFetched(job);
      // Fewer than asked: the queues were empty at that moment. A poke since (a local enqueue, a
      // freed slot) may have changed that; otherwise only other processes' pushes can, so idle.
      if (jobs.length < free && !this.poked) await this.pause(idleMs);
    }
  }

  private runFetched(job: Job): void {
    const { host } = this;
    const queue = host.topology.queue(job.queue) ?? host.durableQueue(job.queue, false);
    // The pool's work list: the heartbeat's `busy` and workers hash.
    const slot = host.pool.work.start(job, host.clock.now());
    host.pool.busy++;
    void host.runner.run(job, queue).finally(() => {
      host.pool.work.end(slot);
      host.pool.busy--;
      this.poke();
    });
  }

  /** Waits for poke(), or at most `ms` when given. */
  private pause(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      const t =
        ms === undefined
          ? undefined
          : setTimeout(() => {
              this.wakeUp = null;
              resolve();
            }, ms);
      this.wakeUp = () => {
        clearTimeout(t);
        this.wakeUp = null;
        resolve();
      };
    });
  }
}
