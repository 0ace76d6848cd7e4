// The embedded connection reads this server's own job system in-process (no HTTP round trip, no
// token): the same compound_metrics the metrics API answers.
import type { AppContext } from '../context.ts';
import type { CompoundMetrics } from '../contract/metrics.ts';
import { compoundMetrics } from '../metrics-api/compound.ts';

export type MetricsSource = () => Promise<CompoundMetrics> | CompoundMetrics;

export function embeddedSource(ctx: AppContext): MetricsSource {
  return () => compoundMetrics(ctx);
}
