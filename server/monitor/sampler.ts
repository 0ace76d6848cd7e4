// One timer per enabled connection, running whether or not a window is open. Each tick reads
// compound_metrics, stores the sample (or a gap with its error), updates the connection's health
// and checks thresholds. Ticks of one connection never overlap; closing waits for the ones in flight.
import type { Connection } from './connections.ts';
import type { Cancel, Clock } from '../clock.ts';
import { andThen, isPromise, type MaybePromise } from '../domain/maybe-promise.ts';

export interface SamplerHooks {
  /**
   * Loads the connection fresh (it may have changed or gone since the last tick): at once from
   * SQLite, a promise from PostgreSQL (a tick then counts as in flight from the moment it fires).
   */
  get(id: string): MaybePromise<Connection | undefined>;
  sample(c: Connection, signal: AbortSignal): Promise<void>;
  intervalMs(c: Connection): number;
  onError(err: unknown, c: Connection): void;
}

export class Sampler {
  private readonly timers = new Map<string, Cancel>();
  private readonly inflight = new Map<string, Promise<void>>();
  /** Ticks waiting for their connection's row (PostgreSQL), so idle() waits for them too. */
  private readonly loading = new Set<Promise<unknown>>();
  private readonly abort = new AbortController();
  private closed = false;

  constructor(
    private readonly hooks: SamplerHooks,
    /** Times the ticks: a test's ManualClock takes a sample per advance of the interval. */
    private readonly clock: Clock,
  ) {}

  /** (Re)starts a connection's timer; the first sample is taken at once. */
  schedule(id: string, delayMs = 0): void {
    if (this.closed) return;
    this.stop(id);
    this.timers.set(
      id,
      this.clock.after(delayMs, () => this.tick(id)),
    );
  }

  stop(id: string): void {
    this.timers.get(id)?.();
    this.timers.delete(id);
  }

  /** Takes one sample now (or waits for the one in flight). */
  async sampleNow(id: string): Promise<void> {
    const running = this.inflight.get(id);
    if (running) return running;
    const c = await this.hooks.get(id);
    if (!c) return;
    await (this.inflight.get(id) ?? this.run(c));
  }

  private tick(id: string): void {
    this.timers.delete(id);
    // Synchronous up to run() when get() answers at once: a ManualClock's advance() then leaves the
    // sample in flight, where idle() finds it.
    const started = this.clock.now();
    const next = andThen(this.hooks.get(id), (c) => {
      if (!c || !c.enabled || this.closed) return;
      return (this.inflight.get(id) ?? this.run(c)).then(() => this.rearm(id, started));
    });
    if (isPromise(next)) {
      const p = next.catch((err: unknown) => this.hooks.onError(err, { id } as Connection)).finally(() => this.loading.delete(p));
      this.loading.add(p);
    }
  }

  private async rearm(id: string, started: number): Promise<void> {
    const c2 = await this.hooks.get(id);
    if (!c2 || !c2.enabled || this.closed || this.timers.has(id)) return;
    const wait = Math.max(0, this.hooks.intervalMs(c2) - (this.clock.now() - started));
    this.schedule(id, wait);
  }

  private run(c: Connection): Promise<void> {
    const p = this.hooks
      .sample(c, this.abort.signal)
      .catch((err: unknown) => this.hooks.onError(err, c))
      .finally(() => this.inflight.delete(c.id));
    this.inflight.set(c.id, p);
    return p;
  }

  /** Resolves once no sample is in flight: a test steps a ManualClock, then waits on this. */
  async idle(): Promise<void> {
    while (this.inflight.size || this.loading.size) await Promise.all([...this.inflight.values(), ...this.loading]);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const id of [...this.timers.keys()]) this.stop(id);
    this.abort.abort();
    await Promise.all([...this.inflight.values(), ...this.loading]);
  }
}
