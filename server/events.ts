// The domain's events: what happened to builds, for whoever listens (the runner queue tick, the log).
// Its own module so the domain can emit them without importing the AppContext that holds the domain.
import { EventEmitter } from 'node:events';
import type { Build } from './store/ports/build.ts';

export interface AppEventMap {
  /** A build became pending (created or re-queued): runners' queues tick. */
  'build:pending': [Build];
  /** A build left `running` (success, failed, canceled, timed out). */
  'build:finished': [Build];
  /** An artifacts archive was stored for a build (its key is the file's). */
  'artifacts:stored': [{ buildId: number; key: string }];
}

export class AppEvents extends EventEmitter<AppEventMap> {}
