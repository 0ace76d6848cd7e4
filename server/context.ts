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
  private reread: (() => Promise<void>) | undefined;
  /** The read sent last, until it answers: it may have been sent before a poll that arrives now. */
  private reading: Promise<void> | undefined;
  /** The read that starts when `reading` answers, shared by every poll that arrived meanwhile. */
  private nextRead: Promise<void> | undefined;
  /** Given by a shared store: how to read its value again (follow is called with it). */
  rereadWith(read: () => Promise<void>): void {
    this.reread = read;
  }
  /**
   * The value a poll compares a runner's last_update with and answers. With a shared store, another
   * instance may have made a build pending a moment ago and its notification not arrived yet: the
   * store is read again (one row, as GitLab reads its shared Redis on every poll), so no instance
   * answers a value another has already moved past. Each poll waits for a read sent after it
   * arrived, but polls arriving together share it: at most two reads are out at a time, not one a poll.
   */
  fresh(): string | Promise<string> {
    if (!this.reread) return this.value;
    return this.readAfterNow().then(() => this.value);
  }

  private readAfterNow(): Promise<void> {
    if (!this.reading) return this.startRead();
    this.nextRead ??= this.reading.then(
      () => this.startRead(),
      () => this.startRead(),
    );
    return this.nextRead;
  }

  private startRead(): Promise<void> {
    this.nextRead = undefined;
    const read = this.reread!().finally(() => {
      if (this.reading === read) this.reading = undefined;
    });
    this.reading = read;
    return read;
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
