// The embedded connection reads this server's own job system in-process (no HTTP round trip, no
// token): the same compound_metrics the metrics API answers, and its set sizes. With `--redis` the job system's view
// is a read of the Redis (a promise); otherwise it is in memory and answered at once.
import type { AppContext } from '../context.ts';
import type { CompoundMetrics } from '../../contract/metrics.ts';
import { compoundMetrics, compoundOf } from '../metrics-api/compound.ts';
import type { MetricsView } from '../metrics/source.ts';
import type { JobSetSizes } from '../../contract/app.ts';

export type MetricsSource = () => Promise<CompoundMetrics> | CompoundMetrics;

export function embeddedSource(ctx: AppContext): MetricsSource {
  return () => {
    const view = ctx.jobs.read();
    return view instanceof Promise ? view.then((v) => withSets(compoundOf(v, ctx.jobs.now()), v)) : withSets(compoundMetrics(ctx), view);
  };
}

/** The sample with the job system's Retries, Scheduled and Dead sizes, as a sidekiq connection's has them. */
function withSets(m: CompoundMetrics, view: MetricsView): CompoundMetrics & { sets?: JobSetSizes } {
  const s = view.sets?.();
  return s ? { ...m, sets: { retry_size: s.retry, scheduled_size: s.scheduled, dead_size: s.dead } } : m;
}
