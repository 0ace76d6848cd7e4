// The metrics API's answers as objects, from the embedded job system's view (in memory: no store
// query, so a call stays cheap with thousands of queues). `compoundMetrics` is also what the
// dashboard's sampler calls in-process for the embedded connection.
import type { AppContext } from '../context.ts';
import type { CompoundMetrics, ProcessEntry, QueueMetrics } from '../../contract/metrics.ts';
import type { MetricsView } from '../metrics/source.ts';
import { isoWithOffset } from './started-at.ts';

function queuesOf(jobs: MetricsView, now: number): { queues: QueueMetrics['queues']; enqueued: number } {
  const queues: QueueMetrics['queues'] = {};
  let enqueued = 0;
  for (const q of jobs.queues()) {
    const backlog = q.backlog;
    enqueued += backlog;
    queues[q.name] = { backlog, latency: q.latency(now) };
  }
  return { queues, enqueued };
}

function processesOf(jobs: MetricsView): ProcessEntry[] {
  return [...jobs.processes()].map((p) => ({
    hostname: p.identity.hostname,
    pid: p.identity.pid,
    tag: p.identity.tag,
    started_at: isoWithOffset(p.startedAt),
    queues: p.queueNames(),
    labels: [...p.identity.labels],
    concurrency: p.concurrency,
    busy: p.busy,
  }));
}

/** queue_metrics, process_metrics and job_stats merged at the top level, from one consistent moment. */
export function compoundMetrics(ctx: AppContext, now = ctx.jobs.now()): CompoundMetrics {
  return compoundOf(ctx.jobs, now);
}

/** The same shape from any source's view (a sidekiq connection's Redis is one). */
export function compoundOf(view: MetricsView, now: number): CompoundMetrics {
  const { queues, enqueued } = queuesOf(view, now);
  return { queues, processes: processesOf(view), jobs: { ...view.counters(), enqueued } };
}
