// The ownership of one server over its own store (SQLite): it samples every enabled connection,
// keeps every connection's history in memory, and writes a sample in one synchronous transaction.
import type { MonitorStore } from '../store/ports/monitor-ports.ts';
import type { ConnectionHistory } from './connection-history.ts';
import type { Ownership, OwnershipHost, Recorder } from './ownership.ts';
import { applyJudgement } from './alerts.ts';

export class OwnsEverything implements Ownership {
  /** After a restart the sampler reads a fresh sample at once: one stored every 30 s is enough. */
  readonly fullSampleEveryMs = 30_000;
  private readonly histories = new Map<string, ConnectionHistory>();

  constructor(
    private readonly store: MonitorStore,
    private readonly host: OwnershipHost,
  ) {}

  start(): void {
    const now = this.host.clock.now();
    for (const c of this.store.connections.list()) {
      this.historyOf(c.id).load(now);
      this.host.loadLatest(c.id, this.store.connections.lastSample(c.id));
      if (c.enabled) this.host.schedule(c.id);
    }
  }

  holds(): boolean {
    return true;
  }

  /** Unless deleted while the read waited. */
  samplesStill(id: string): boolean {
    return this.store.connections.get(id) !== undefined;
  }

  historyOf(id: string): ConnectionHistory {
    let h = this.histories.get(id);
    if (!h) this.histories.set(id, (h = this.host.newHistory(id, this.store)));
    return h;
  }

  recorder(id: string): Recorder {
    return {
      history: this.historyOf(id),
      commit: (record) =>
        this.store.tx(() => {
          const w = record();
          this.store.connections.setHealth(id, w.at, w.error, w.sampleJson);
          if (w.alerts) void applyJudgement(this.store.alerts, w.alerts); // synchronous on SQLite
        }),
    };
  }

  announce(): void {}

  claimSoon(): void {}

  /** Nobody else could take it: disabled, it is still this server's. */
  release(): boolean {
    return false;
  }

  forget(id: string): void {
    this.histories.delete(id);
  }

  /** Each history drops what it holds past retention, in memory and in its rows. */
  prune(now: number): void {
    for (const h of this.histories.values()) h.prune(now);
  }

  inFlight(): Promise<unknown>[] {
    return [];
  }

  busy(): boolean {
    return false;
  }

  halt(): void {}

  async close(): Promise<void> {}
}
