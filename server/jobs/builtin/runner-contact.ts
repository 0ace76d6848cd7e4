// Marks runners that have not been heard from within the configured time as offline.
import type { RunnersDomain } from '../../domain/runners.ts';
import type { JobKind } from '../types.ts';

export function runnerContactJob(runners: RunnersDomain, offlineAfterMs: number): JobKind {
  return {
    class: 'RunnerContactWorker',
    queue: 'runner_contact',
    retry: false,
    async perform() {
      await runners.markOffline(Date.now() - offlineAfterMs);
    },
  };
}
