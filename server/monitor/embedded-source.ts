// The embedded connection reads this server's own job system in-process (no HTTP round trip, no
// token): the same compound_metrics the metrics API answers. With `--redis` the job system's view
// is a read of the Redis (a promise); otherwise it is in memory and answered at once.
import type { AppContext } from '../context.ts';
import type { CompoundMetrics } from '../../contract/metrics.ts';
import { compoundMetrics, compoundOf } from '../metrics-api/compound.ts';

export type MetricsSource = () => Promise<CompoundMetrics> | CompoundMetrics;

export function embeddedSource(ctx: AppContext): MetricsSource {
  return () => {
    const view = ctx.jobs.read();
    return view instanceof Promise ? view.then((v) => compoundOf(v, ctx.jobs.now())) : compoundMetrics(ctx);
  };
}
