// What every route plugin and background service of one server shares.
export { AppEvents, type AppEventMap } from './events.ts';
import crypto from 'node:crypto';
import type { Config } from './config.ts';
import type { Store } from './store/index.ts';
import type { AppEvents } from './events.ts';
import type { JobSystem } from './jobs/job-system.ts';
import type { Domain } from './domain/index.ts';
import type { DemoLoad } from './jobs/demo-load.ts';
import type { Services } from './lifecycle.ts';

/**
 * The value behind `X-GitLab-Last-Update`. GitLab kept one per runner in Redis and ticked it when a
 * build the runner could take changed; one instance-wide value that ticks on every new pending build
 * is coarser but never hides a new build behind a stale `last_update`. The boot id makes values from
 * before a restart stale.
 *
 * On a shared store (PostgreSQL: store/pg/runner-queue.ts) the value is the store's, so every
 * instance answers a runner the same one: the store moves it (follow), and tick() is left to it.
 */
export class RunnerQueue {
  private epoch = crypto.randomBytes(4).toString('hex');
  private counter = 0;
  private shared = false;
  get value(): string {
    return `${this.epoch}-${this.counter}`;
  }
  /** A build was made pending here or heard of (build:pending). */
  tick(): void {
    if (!this.shared) this.counter++;
  }
  /** The shared store's value from now on; a counter older than the one held (heard out of order) leaves it. */
  follow(epoch: string, counter: number): void {
    if (!this.shared || epoch !== this.epoch) [this.epoch, this.counter] = [epoch, counter];
    else this.counter = Math.max(this.counter, counter);
    this.shared = true;
  }
}

export interface AppContext {
  config: Config;
  store: Store;
  /** The rules of builds, runners, projects and users: what handlers and jobs call (server/domain/). */
  domain: Domain;
  events: AppEvents;
  runnerQueue: RunnerQueue;
  /** The embedded job system (queues, worker pools, counters); also the metrics API's source. */
  jobs: JobSystem;
  /** The demo load generator, driving simulated processes and queues in `jobs`. */
  demo: DemoLoad;
  /** Every long-running part (monitor, simulator, ...): the app starts them after its routes, stops them before the store closes. */
  services: Services;
  startedAt: number;
  /** Set by a host that can restart the server (hosts/server-host.ts): empties the data and restarts. */
  requestReset?: () => Promise<void>;
}
