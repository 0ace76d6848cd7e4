// Running a job taken from a queue to its end, and what the end means: counted, then acknowledged,
// retried with backoff or buried in the dead set. Also the stop: running jobs are asked to give up
// and waited for a little; a job cut off by the stop stays queued and runs again at the next start.
import { setMaxListeners } from 'node:events';
import type { Clock } from '../clock.ts';
import type { Awaitable, JobBackend } from './backend.ts';
import type { KindRegistry } from './registry.ts';
import type { Counters } from './counters.ts';
import type { JobQueue } from './queue.ts';
import type { FailedJob, Job } from './types.ts';

export interface JobRunnerDeps {
  kinds: KindRegistry;
  backend: JobBackend;
  counts: Counters;
  clock: Clock;
  config: { jobBackoffUnitMs: number; jobDeadMax: number };
  /** Whether the queue still exists: a queue deleted while its job ran takes no retry of it. */
  hasQueue(name: string): boolean;
  /** A durable job left its queue's waiting jobs. */
  taken(job: Job): void;
  log(): { warn(obj: unknown, msg?: string): void };
  /** Backoff of a job that failed `count` times before (retry.ts, or Sidekiq's for a shared backend). */
  retryDelay(count: number, unitMs: number): number;
  /** The failed job went into the retry set (a mirror in memory keeps it too). */
  retrying(job: FailedJob): void;
}

export class JobRunner {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  /** Jobs being worked on, by queue: a queue with one running is not idle. */
  private readonly runningByQueue = new Map<string, number>();
  private stopping = false;
  /** Set once the end of the stop is written: later ends are not recorded. */
  closed = false;

  constructor(private readonly deps: JobRunnerDeps) {
    // Every running job listens for the stop; thousands may run at once under the demo load.
    setMaxListeners(0, this.abort.signal);
  }

  isRunning(queue: string): boolean {
    return (this.runningByQueue.get(queue) ?? 0) > 0;
  }

  /** Runs one job to its end; never rejects. */
  run(job: Job, from: JobQueue): Promise<void> {
    const p = this.runJob(job, from);
    this.inFlight.add(p);
    return p.finally(() => this.inFlight.delete(p));
  }

  /** Asks running jobs to give up and waits up to `graceMs` for them. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    if (this.inFlight.size === 0) return;
    // Real time, not the job system's clock: a manual test clock would never end the grace.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
  }

  private async runJob(job: Job, from: JobQueue): Promise<void> {
    const { kinds, backend } = this.deps;
    const durable = from.durable;
    if (durable) {
      this.deps.taken(job);
      const claimed = backend.claim(job);
      if (claimed instanceof Promise) await claimed.catch((err: unknown) => this.deps.log().warn({ err, job: job.id }, 'could not claim a job'));
    }
    this.runningByQueue.set(job.queue, (this.runningByQueue.get(job.queue) ?? 0) + 1);
    let error: unknown;
    try {
      const kind = kinds.get(job.kind);
      if (!kind) throw unknownClass(job.class);
      await kind.perform(job.args, { signal: this.abort.signal });
    } catch (err) {
      error = err ?? new Error('job failed');
    } finally {
      const n = (this.runningByQueue.get(job.queue) ?? 1) - 1;
      if (n > 0) this.runningByQueue.set(job.queue, n);
      else this.runningByQueue.delete(job.queue);
    }
    // Cut off by shutdown: leave the job queued, it runs again at the next start.
    if (this.closed || (this.stopping && error !== undefined)) return;
    const failed = (err: unknown) => this.deps.log().warn({ err, job: job.id }, 'could not record the end of a job; it will run again after a restart');
    try {
      const recorded = this.record(job, durable, error);
      if (recorded instanceof Promise) await recorded.catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  /**
   * Counts the run (Sidekiq counts failed runs as processed too) and retires, retries or buries the
   * job. The counters written with it are marked saved at once (a later job's write must not carry
   * them again while this one is in flight) and unsaved again if the write fails.
   */
  private record(job: Job, durable: boolean, error: unknown): Awaitable<void> {
    const { backend, counts, config } = this.deps;
    counts.count(error !== undefined);
    if (!durable) return; // memory job: counters only, saved by the job system's timer
    const now = this.deps.clock.now();
    const counters = counts.unsaved();
    counts.saved(counters);
    let written: Awaitable<void>;
    try {
      if (error === undefined || job.retry === false || !this.deps.hasQueue(job.queue)) written = backend.ack(job, counters);
      else {
        const failed: FailedJob = { ...job, run_at: null, failed_at: now, error: errorText(error) };
        if (job.retry_count < job.retry) {
          const retry = { ...failed, retry_count: job.retry_count + 1, run_at: now + this.deps.retryDelay(job.retry_count, config.jobBackoffUnitMs) };
          written = backend.retryLater(retry, counters);
          this.deps.retrying(retry);
        } else written = backend.kill(failed, counters, config.jobDeadMax);
      }
    } catch (err) {
      counts.unsave(counters);
      throw err;
    }
    if (written instanceof Promise) {
      return written.catch((err: unknown) => {
        counts.unsave(counters);
        throw err;
      });
    }
  }
}

/**
 * What Sidekiq 6.4's Processor raises for a class it cannot constantize: NameError, "uninitialized
 * constant X" (Ruby 3.1 appends a source excerpt to the message; the first line is the constant's).
 * It fails the job through the retry path, so an app's job pushed to a queue this server serves
 * lands in the retry set as it would under a Sidekiq without that class, never lost.
 */
function unknownClass(cls: string): Error {
  const err = new Error(`uninitialized constant ${cls}`);
  err.name = 'NameError';
  return err;
}

function errorText(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.slice(0, 2000);
}
