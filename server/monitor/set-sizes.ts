// Sidekiq's Retries, Scheduled and Dead sizes of a sample, for history: a sidekiq connection's
// samples carry them in its `sidekiq` extras, the embedded connection's as `sets`; a GitLab's none.
import type { CompoundMetrics } from '../../contract/metrics.ts';
import type { JobSetSizes } from '../../contract/app.ts';
import { S, noSets } from './sample-codec.ts';

export function setsOf(m: CompoundMetrics): Float64Array {
  const sets = noSets();
  const carried = m as { sidekiq?: Partial<JobSetSizes>; sets?: Partial<JobSetSizes> };
  const extras = carried.sidekiq ?? carried.sets;
  if (!extras) return sets;
  sets[S.retry] = extras.retry_size ?? NaN;
  sets[S.scheduled] = extras.scheduled_size ?? NaN;
  sets[S.dead] = extras.dead_size ?? NaN;
  return sets;
}
