// What the metrics API reads: queues with backlog and latency, worker processes with busy and
// concurrency, and the job counters. The embedded job system is one source; a Redis in Sidekiq's
// layout or a remote Sidekiq can be another, answering `read()` after a round trip.
import type { JobCounters } from '../jobs/types.ts';

export interface QueueStats {
  readonly name: string;
  readonly backlog: number;
  /** Sidekiq's `latency.to_i` as of `now`: whole seconds since the oldest waiting job was enqueued. */
  latency(now: number): number;
}

export interface ProcessStats {
  readonly identity: { readonly hostname: string; readonly pid: number; readonly tag: string; readonly labels: readonly string[] };
  readonly startedAt: number;
  readonly concurrency: number;
  readonly busy: number;
  /**
   * Changes whenever anything but `busy` changes, so a writer may cache the rest of the entry per
   * object. A source that builds new objects on every read may leave it 0.
   */
  readonly version: number;
  queueNames(): string[];
}

/** Sidekiq's Retries, Scheduled and Dead sizes. */
export interface SetSizes {
  retry: number;
  scheduled: number;
  dead: number;
}

/** One consistent moment of a source. */
export interface MetricsView {
  queues(): Iterable<QueueStats>;
  processes(): Iterable<ProcessStats>;
  counters(): JobCounters;
  /** The set sizes, where the source has them at hand (not the metrics API's answer: GitLab's has none). */
  sets?(): SetSizes | undefined;
}

export interface MetricsSource {
  /** The time latencies are measured against (the source's clock). */
  now(): number;
  read(): MetricsView | Promise<MetricsView>;
}
