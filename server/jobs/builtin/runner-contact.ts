// Marks runners that have not been heard from within the configured time as offline.
import type { Store } from '../../store/index.ts';
import type { JobKind } from '../types.ts';

export function runnerContactJob(store: Store, offlineAfterMs: number): JobKind {
  return {
    class: 'RunnerContactWorker',
    queue: 'runner_contact',
    retry: false,
    perform() {
      store.db.tx(() => store.runners.markOffline(Date.now() - offlineAfterMs));
    },
  };
}
