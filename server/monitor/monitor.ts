// The monitor service: connections, their sampler, their history and alerts. The app creates it,
// registers it among its services (started after the routes, stopped before the store closes) and
// hands it to the app API's routes (server/app-api/), which go through this object only.
import type { AppContext } from '../context.ts';
import type { Service } from '../lifecycle.ts';
import type { Cancel, Clock } from '../clock.ts';
import type { MonitorStore } from '../store/ports/monitor-ports.ts';
import type { Alert, History } from '../../contract/app.ts';
import type { CompoundMetrics } from '../../contract/metrics.ts';
import { Connections, EMBEDDED_ID, type Connection } from './connections.ts';
import { ConnectionHistory, type SampleRates } from './connection-history.ts';
import { Alerts } from './alerts.ts';
import { Sampler } from './sampler.ts';
import type { FetchOutcome } from './remote-client.ts';
import { probeConnection, readConnection, sourcesOf, type SourceDeps } from './read-source.ts';
import { queryHistory, type HistoryParams } from './downsample.ts';
import { SidekiqSources, sidekiqOptionsOf } from '../sidekiq/sources.ts';

const HOUR = 3_600_000;

export interface MonitorLog {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface Latest {
  at: number;
  metrics: CompoundMetrics;
}

export class Monitor implements Service {
  readonly name = 'monitor';
  readonly connections: Connections;
  readonly alerts: Alerts;
  private readonly histories = new Map<string, ConnectionHistory>();
  private readonly latest = new Map<string, Latest>();
  /** Whether the last sample of a connection failed (to log health changes once). */
  private readonly failing = new Map<string, boolean>();
  private readonly persistedAt = new Map<string, number>();
  private readonly sampler: Sampler;
  private readonly store: MonitorStore;
  private readonly sources: SourceDeps;
  /** One Redis client per sidekiq connection (server/sidekiq/). */
  readonly sidekiq: SidekiqSources;
  private housekeeping: Cancel | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly log: MonitorLog,
    /** Sample times, the sampler's timers and retention: a test's ManualClock moves them all. */
    readonly clock: Clock,
  ) {
    this.store = ctx.store.monitor;
    this.connections = new Connections(this.store.connections, clock);
    this.alerts = new Alerts(this.store.alerts);
    this.sidekiq = new SidekiqSources(() => sidekiqOptionsOf(ctx.config));
    this.sources = sourcesOf(ctx, this.sidekiq);
    this.sampler = new Sampler(
      {
        get: (id) => this.connections.get(id),
        sample: (c, signal) => this.sampleOnce(c, signal),
        intervalMs: (c) => this.intervalMs(c),
        onError: (err, c) => log.warn(`sampling connection ${c.id} failed: ${(err as Error).message}`),
      },
      clock,
    );
  }

  /** Loads every connection's history and starts sampling the enabled ones. */
  start(): void {
    const now = this.clock.now();
    for (const c of this.connections.list()) {
      this.historyOf(c.id).load(now);
      const last = this.connections.lastSample(c.id);
      if (last) {
        try {
          this.latest.set(c.id, { at: last.at, metrics: JSON.parse(last.json) as CompoundMetrics });
        } catch {
          /* an unreadable cached sample is replaced by the next one */
        }
      }
      if (c.enabled) this.sampler.schedule(c.id);
    }
    this.alerts.prune(now - this.ctx.config.historyDays * 24 * HOUR);
    this.housekeeping = this.clock.every(HOUR, () => this.prune(this.clock.now()));
  }

  intervalMs(c: Connection): number {
    return this.ctx.config.monitorIntervalMs > 0 ? this.ctx.config.monitorIntervalMs : c.intervalS * 1000;
  }

  historyOf(id: string): ConnectionHistory {
    let h = this.histories.get(id);
    if (!h) {
      h = new ConnectionHistory(this.store, id, {
        rawMs: this.ctx.config.historyRawHours * HOUR,
        totalMs: this.ctx.config.historyDays * 24 * HOUR,
      }, this.ctx.config.historyMaxQueues);
      this.histories.set(id, h);
    }
    return h;
  }

  history(c: Connection, p: Omit<HistoryParams, 'intervalMs'>): History {
    const h = this.historyOf(c.id);
    return { ...queryHistory(h, { ...p, intervalMs: this.intervalMs(c) }), queues_untracked: h.untracked, history_max_queues: h.maxQueues };
  }

  current(id: string): Latest | undefined {
    return this.latest.get(id);
  }

  /** A connection was created or changed: restart its timer (or stop it when disabled). */
  changed(c: Connection): void {
    if (c.enabled) this.sampler.schedule(c.id);
    else {
      this.sampler.stop(c.id);
      this.sidekiq.drop(c.id); // no idle socket to someone's Redis while nothing samples it
    }
  }

  removed(id: string): void {
    this.sampler.stop(id);
    this.sidekiq.drop(id);
    this.histories.delete(id);
    this.latest.delete(id);
    this.failing.delete(id);
    this.persistedAt.delete(id);
    this.alerts.forget(id);
  }

  sampleNow(id: string): Promise<void> {
    return this.sampler.sampleNow(id);
  }

  /** Resolves once no sample is in flight (the ticks a ManualClock's advance started have been stored). */
  idle(): Promise<void> {
    return this.sampler.idle();
  }

  /** Reads a connection once without storing anything (the "Test" button). */
  probe(c: Pick<Connection, 'kind' | 'baseUrl' | 'token' | 'apiVersion' | 'segment'>): Promise<FetchOutcome> {
    return probeConnection(c, this.sources);
  }

  private async sampleOnce(c: Connection, signal: AbortSignal): Promise<void> {
    const t = this.clock.now();
    const { metrics, error, queuesLeftOut } = await readConnection(c, signal, this.sources);
    if (signal.aborted || !this.connections.get(c.id)) return; // closing, or deleted while we waited
    this.record(c, t, metrics, error, queuesLeftOut);
  }

  /** Stores one sample (good or a gap) and runs the threshold checks; also the bench's seeding path. */
  record(c: Connection, t: number, metrics: CompoundMetrics | null, error: string, queuesLeftOut = 0): Alert[] {
    const h = this.historyOf(c.id);
    // Health changes are logged once, not every sample; messages name the URL, never the token.
    const wasFailing = this.failing.get(c.id) ?? c.lastError !== null;
    this.failing.set(c.id, !metrics);
    if (!metrics && !wasFailing) this.log.warn(`connection ${c.id} (${c.name}): sampling fails: ${error}`);
    if (metrics && wasFailing) this.log.info(`connection ${c.id} (${c.name}): sampling works again`);
    if (!metrics) {
      h.recordGap(t, error);
      this.connections.setHealth(c.id, t, error);
      return [];
    }
    let rates: SampleRates = { processedRate: null, failedRate: null };
    let raised: Alert[] = [];
    this.store.tx(() => {
      rates = h.recordGood(t, metrics, queuesLeftOut);
      // The full sample is written every 30 s at most: after a restart the sampler reads a fresh one at once.
      const persist = t - (this.persistedAt.get(c.id) ?? -Infinity) >= 30_000;
      if (persist) this.persistedAt.set(c.id, t);
      this.connections.setHealth(c.id, t, null, persist ? JSON.stringify(metrics) : undefined);
      raised = this.alerts.evaluate(c.id, t, c.thresholds, metrics, rates.failedRate);
    });
    this.latest.set(c.id, { at: t, metrics });
    return raised;
  }

  private prune(now: number): void {
    for (const h of this.histories.values()) h.prune(now);
    this.alerts.prune(now - this.ctx.config.historyDays * 24 * HOUR);
  }

  /** Stops the timers and waits for the samples in flight (they store nothing once aborted). */
  async stop(): Promise<void> {
    this.housekeeping?.();
    this.housekeeping = null;
    // Closing the Redis clients first ends sidekiq reads in flight now instead of at their timeout.
    this.sidekiq.closeAll();
    await this.sampler.close();
    this.sidekiq.closeAll();
  }
}

export { EMBEDDED_ID };
