// The jobs a worker pool is running, as Sidekiq's Processor::WORKER_STATE holds them: on a shared
// backend the heartbeat writes them to `<identity>:workers` (Sidekiq's Busy page and Workers API)
// and their number as `busy`, from this one list so the two never disagree; the Busy view reads
// them for every backend. Jobscope has no threads: each worker slot gets a thread id, reused by the
// slot's next job as a Sidekiq thread's is.
import type { InFlightJob } from './backend.ts';
import type { Job } from './types.ts';

export interface RunningJob {
  tid: string;
  job: Job;
  /** When it started, epoch ms. */
  runAt: number;
}

export class WorkState {
  private readonly bySlot = new Map<number, RunningJob>();

  /** Records a job taken at `now` (epoch ms); returns its slot, to pass to `end`. */
  start(job: Job, now: number): number {
    let slot = 0;
    while (this.bySlot.has(slot)) slot++;
    // Sidekiq's tid is (thread object_id ^ pid) in base 36; a slot number is this process's thread.
    this.bySlot.set(slot, { tid: (slot ^ process.pid).toString(36), job, runAt: now });
    return slot;
  }

  end(slot: number): void {
    this.bySlot.delete(slot);
  }

  running(): RunningJob[] {
    return [...this.bySlot.values()];
  }

  list(): InFlightJob[] {
    return this.running().map((r) => ({ tid: r.tid, queue: r.job.queue, payload: r.job.raw ?? '', runAt: r.runAt }));
  }
}
