// The retry set mirrored in memory, soonest first, so the poll that moves due retries back into
// their queues reads no rows. The backend keeps the same set durably.
import type { FailedJob } from './types.ts';

export class RetrySet {
  private jobs: FailedJob[] = [];

  load(jobs: FailedJob[]): void {
    this.jobs = jobs;
  }

  insert(job: FailedJob): void {
    let i = this.jobs.length;
    while (i > 0 && (this.jobs[i - 1]!.run_at ?? 0) > (job.run_at ?? 0)) i--;
    this.jobs.splice(i, 0, job);
  }

  /** Removes and returns the jobs due at `now`. */
  takeDue(now: number): FailedJob[] {
    let n = 0;
    while (n < this.jobs.length && (this.jobs[n]!.run_at ?? 0) <= now) n++;
    return n === 0 ? [] : this.jobs.splice(0, n);
  }

  /** Removes and returns the jobs of these ids (retry now, delete); ids not here are skipped. */
  take(ids: ReadonlySet<number>): FailedJob[] {
    const taken: FailedJob[] = [];
    this.jobs = this.jobs.filter((j) => (ids.has(j.id) ? (taken.push(j), false) : true));
    return taken;
  }

  /** Removes and returns every job. */
  clear(): FailedJob[] {
    const all = this.jobs;
    this.jobs = [];
    return all;
  }

  dropQueue(name: string): void {
    this.jobs = this.jobs.filter((j) => j.queue !== name);
  }

  queueNames(): Set<string> {
    return new Set(this.jobs.map((j) => j.queue));
  }

  list(): readonly FailedJob[] {
    return this.jobs;
  }
}
