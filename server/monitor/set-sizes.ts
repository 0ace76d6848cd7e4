// Sidekiq's Retries, Scheduled and Dead sizes of a sample, for history: only a sidekiq
// connection's samples carry them (its `sidekiq` extras); every other kind has none.
import type { CompoundMetrics } from '../../contract/metrics.ts';
import type { SidekiqExtras } from '../../contract/sidekiq.ts';
import { S, noSets } from './sample-codec.ts';

export function setsOf(m: CompoundMetrics): Float64Array {
  const sets = noSets();
  const extras = (m as { sidekiq?: Partial<SidekiqExtras> }).sidekiq;
  if (!extras) return sets;
  sets[S.retry] = extras.retry_size ?? NaN;
  sets[S.scheduled] = extras.scheduled_size ?? NaN;
  sets[S.dead] = extras.dead_size ?? NaN;
  return sets;
}
