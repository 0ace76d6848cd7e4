// The jobs this process is running from a shared backend, as Sidekiq's Processor::WORKER_STATE holds
// them: the heartbeat writes them to `<identity>:workers` (Sidekiq's Busy page and Workers API) and
// their number as `busy`, from this one list so the two never disagree. Jobscope has no threads:
// each worker slot gets a thread id, reused by the slot's next job as a Sidekiq thread's is.
import type { InFlightJob } from './backend.ts';
import type { Job } from './types.ts';

export class WorkState {
  private readonly bySlot = new Map<number, InFlightJob>();

  /** Records a job taken at `now` (epoch ms); returns its slot, to pass to `end`. */
  start(job: Job, now: number): number {
    let slot = 0;
    while (this.bySlot.has(slot)) slot++;
    // Sidekiq's tid is (thread object_id ^ pid) in base 36; a slot number is this process's thread.
    this.bySlot.set(slot, { tid: (slot ^ process.pid).toString(36), queue: job.queue, payload: job.raw ?? '', runAt: now });
    return slot;
  }

  end(slot: number): void {
    this.bySlot.delete(slot);
  }

  list(): InFlightJob[] {
    return [...this.bySlot.values()];
  }
}
