// The monitor service: connections, their sampler, their history and alerts. The app creates it,
// registers it among its services (started after the routes, stopped before the store closes) and
// hands it to the app API's routes (server/app-api/), which go through this object only.
//
// One class for every backend. Its ownership policy (ownership.ts) says which connections this
// instance samples and where a sample's writes go: all of them in one synchronous transaction on
// SQLite (owns-everything.ts), the ones this instance holds on its session when instances share
// PostgreSQL (shared-ownership.ts). `A` is how the store answers: at once on SQLite, where the
// monitor answers at once too; the routes await either.
import type { AppContext } from '../context.ts';
import type { Service } from '../lifecycle.ts';
import type { Cancel, Clock } from '../clock.ts';
import type { AlertsRepo, ConnectionsRepo } from '../store/ports/monitor-ports.ts';
import type { Alert, AlertBoard, History } from '../../contract/app.ts';
import type { CompoundMetrics } from '../../contract/metrics.ts';
import { andThen, isPromise, type Loose, type MaybePromise } from '../domain/maybe-promise.ts';
import { Connections, EMBEDDED_ID, type Connection } from './connections.ts';
import { ConnectionHistory, type Retention } from './connection-history.ts';
import { judge } from './alerts.ts';
import { Sampler } from './sampler.ts';
import type { FetchOutcome } from './remote-client.ts';
import { probeConnection, readConnection, sourcesOf, type SourceDeps } from './read-source.ts';
import { queryHistory, type HistoryParams } from './downsample.ts';
import { SidekiqSources, sidekiqOptionsOf } from '../sidekiq/sources.ts';
import type { Answer, Answers, Ownership, OwnershipHost, OwnershipOf, SampleWrites } from './ownership.ts';

const HOUR = 3_600_000;
/** Most firing alerts one answer lists (a default rule over thousands of queues could fire for each). */
const FIRING_LISTED = 1000;

export interface MonitorLog {
  info(msg: string): void;
  warn(msg: string): void;
}

export interface Latest {
  at: number;
  metrics: CompoundMetrics;
}

/** The ports the monitor reads itself; history is its ownership policy's. */
export interface MonitorPorts {
  connections: Loose<ConnectionsRepo>;
  alerts: Loose<AlertsRepo>;
}

export class Monitor<A extends Answers = 'now'> implements Service {
  readonly name = 'monitor';
  readonly connections: Connections<A>;
  readonly alerts: {
    since(sinceId: number, limit?: number, connectionId?: string): Answer<A, Alert[]>;
    /** The alerts firing now and the most recently resolved. */
    board(resolved: number): Answer<A, AlertBoard>;
    /** Undefined for an unknown id. */
    acknowledge(id: number): Answer<A, Alert | undefined>;
  };
  /** One Redis client per sidekiq connection (server/sidekiq/). */
  readonly sidekiq: SidekiqSources;
  private readonly ownership: Ownership;
  private readonly latest = new Map<string, Latest>();
  /** Whether the last sample of a connection failed (to log health changes once). */
  private readonly failing = new Map<string, boolean>();
  private readonly persistedAt = new Map<string, number>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly sampler: Sampler;
  private readonly sources: SourceDeps;
  private housekeeping: Cancel | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly log: MonitorLog,
    /** Sample times, the sampler's timers and retention: a test's ManualClock moves them all. */
    readonly clock: Clock,
    private readonly ports: MonitorPorts,
    ownershipOf: OwnershipOf,
  ) {
    this.ownership = ownershipOf(this.host());
    this.connections = new Connections<A>(ports.connections, clock, (id) => this.ownership.announce(id));
    this.alerts = {
      since: (sinceId, limit = 500, connectionId) => ports.alerts.since(sinceId, limit, connectionId) as Answer<A, Alert[]>,
      board: (resolved) => ports.alerts.board(FIRING_LISTED, resolved) as Answer<A, AlertBoard>,
      acknowledge: (id) => ports.alerts.acknowledge(id, clock.now()) as Answer<A, Alert | undefined>,
    };
    this.sidekiq = new SidekiqSources(() => sidekiqOptionsOf(ctx.config));
    this.sources = sourcesOf(ctx, this.sidekiq);
    this.sampler = new Sampler(
      {
        // Only what this instance holds: a connection it let go of is someone else's to sample.
        get: (id) => (this.ownership.holds(id) ? this.connections.get(id) : undefined),
        sample: (c, signal) => this.sampleOnce(c, signal),
        intervalMs: (c) => this.intervalMs(c),
        onError: (err, c) => log.warn(`sampling connection ${c.id} failed: ${(err as Error).message}`),
      },
      clock,
    );
  }

  /** Loads what this instance samples, starts sampling it, and prunes hourly. */
  start(): MaybePromise<void> {
    return andThen(this.connections.ensureEmbedded(), () =>
      andThen(this.ownership.start(), () => {
        this.housekeeping = this.clock.every(HOUR, () => this.background(this.prune(this.clock.now())));
        return this.prune(this.clock.now());
      }),
    );
  }

  intervalMs(c: Connection): number {
    return this.ctx.config.monitorIntervalMs > 0 ? this.ctx.config.monitorIntervalMs : c.intervalS * 1000;
  }

  /** Whether this instance samples the connection now (tests; the others follow its rows). */
  samples(id: string): boolean {
    return this.ownership.holds(id);
  }

  history(c: Connection, p: Omit<HistoryParams, 'intervalMs'>): Answer<A, History> {
    return andThen(this.ownership.historyOf(c.id), (h) => ({
      ...queryHistory(h, { ...p, intervalMs: this.intervalMs(c) }),
      queues_untracked: h.untracked,
      history_max_queues: h.maxQueues,
    })) as Answer<A, History>;
  }

  /** The latest good sample: from memory where this instance took it, else as the sampler stored it. */
  current(id: string): Answer<A, Latest | undefined> {
    const mine = this.ownership.holds(id) ? this.latest.get(id) : undefined;
    return (mine ?? andThen(this.connections.lastSample(id), latestOf)) as Answer<A, Latest | undefined>;
  }

  /** A connection was created or changed here, or another instance says so. */
  changed(c: Connection): void {
    if (this.ownership.holds(c.id)) {
      if (c.enabled) this.sampler.schedule(c.id);
      else this.letGo(c.id);
    } else if (c.enabled) this.ownership.claimSoon();
  }

  /** Called before the row is deleted: nothing more is sampled or written for it here. */
  removed(id: string): void {
    this.letGo(id);
    this.ownership.forget(id);
    this.latest.delete(id);
    this.failing.delete(id);
    this.persistedAt.delete(id);
  }

  sampleNow(id: string): Promise<void> {
    return this.sampler.sampleNow(id);
  }

  /** Reads a connection once without storing anything (the "Test" button). */
  probe(c: Pick<Connection, 'kind' | 'baseUrl' | 'token' | 'apiVersion' | 'segment'>): Promise<FetchOutcome> {
    return probeConnection(c, this.sources);
  }

  /** Resolves once no claim, load or sample is in flight (a test steps a ManualClock, then waits on this). */
  async idle(): Promise<void> {
    for (;;) {
      await Promise.allSettled([...this.pending, ...this.ownership.inFlight(), this.sampler.idle()]);
      if (!this.pending.size && !this.ownership.busy()) return this.sampler.idle();
    }
  }

  /** Stores one sample (good or a gap) with the connection's health and the alerts it raised; also the bench's seeding path. */
  record(c: Connection, t: number, metrics: CompoundMetrics | null, error: string, queuesLeftOut = 0): MaybePromise<void> {
    return andThen(this.ownership.recorder(c.id), (recorder) => {
      if (!recorder) return;
      // Health changes are logged once, not every sample; messages name the URL, never the token.
      const wasFailing = this.failing.get(c.id) ?? c.lastError !== null;
      this.failing.set(c.id, !metrics);
      if (!metrics && !wasFailing) this.log.warn(`connection ${c.id} (${c.name}): sampling fails: ${error}`);
      if (metrics && wasFailing) this.log.info(`connection ${c.id} (${c.name}): sampling works again`);
      const stored = recorder.commit(() => this.recordInto(recorder.history, c, t, metrics, error, queuesLeftOut));
      return andThen(stored, () => void (metrics && this.latest.set(c.id, { at: t, metrics })));
    });
  }

  /** Stops the timers and waits for the samples in flight (they store nothing once aborted). */
  async stop(): Promise<void> {
    this.ownership.halt();
    this.housekeeping?.();
    this.housekeeping = null;
    // Closing the Redis clients first ends sidekiq reads in flight now instead of at their timeout.
    this.sidekiq.closeAll();
    await this.sampler.close();
    await Promise.allSettled(this.pending);
    await this.ownership.close();
    this.sidekiq.closeAll();
  }

  private letGo(id: string): void {
    this.sampler.stop(id);
    this.sidekiq.drop(id); // no idle socket to someone's Redis while nothing samples it
    if (this.ownership.release(id)) this.latest.delete(id);
  }

  private sampleOnce(c: Connection, signal: AbortSignal): Promise<void> {
    const t = this.clock.now();
    return readConnection(c, signal, this.sources).then(({ metrics, error, queuesLeftOut }) => {
      if (signal.aborted || !this.ownership.samplesStill(c.id)) return; // closing, deleted or let go of while we waited
      return this.record(c, t, metrics, error, queuesLeftOut);
    });
  }

  /** Writes one sample into the connection's history and answers what else it stores. */
  private recordInto(h: ConnectionHistory, c: Connection, t: number, metrics: CompoundMetrics | null, error: string, queuesLeftOut: number): SampleWrites {
    if (!metrics) {
      h.recordGap(t, error);
      return { at: t, error, sampleJson: undefined, alerts: null };
    }
    const rates = h.recordGood(t, metrics, queuesLeftOut);
    const persist = t - (this.persistedAt.get(c.id) ?? -Infinity) >= this.ownership.fullSampleEveryMs;
    if (persist) this.persistedAt.set(c.id, t);
    const alerts = judge(c.id, t, c.thresholds, metrics, rates.failedRate, this.ctx.config.alertsKeepResolved);
    return { at: t, error: null, sampleJson: persist ? JSON.stringify(metrics) : undefined, alerts };
  }

  private retention(): Retention {
    return { rawMs: this.ctx.config.historyRawHours * HOUR, totalMs: this.ctx.config.historyDays * 24 * HOUR };
  }

  private prune(now: number): MaybePromise<void> {
    const retention = this.retention();
    return andThen(this.ownership.prune(now, retention), () => this.ports.alerts.deleteBefore(now - retention.totalMs));
  }

  private background(work: MaybePromise<unknown>): void {
    if (isPromise(work)) this.track(work);
  }

  private track(work: Promise<unknown>): void {
    const t = work.catch((err: unknown) => this.log.warn(`monitor: ${(err as Error).message}`)).finally(() => this.pending.delete(t));
    this.pending.add(t);
  }

  private host(): OwnershipHost {
    return {
      clock: this.clock,
      newHistory: (id, store) => new ConnectionHistory(store, id, this.retention(), this.ctx.config.historyMaxQueues),
      loadLatest: (id, last) => {
        const l = latestOf(last);
        if (l) this.latest.set(id, l);
      },
      schedule: (id) => this.sampler.schedule(id),
      changed: (c) => this.changed(c),
      removed: (id) => this.removed(id),
      letGo: (id) => this.letGo(id),
      unload: (id) => this.sampler.stop(id),
      track: (work) => this.track(work),
      warn: (msg) => this.log.warn(msg),
    };
  }
}

/** A stored sample as the current one; an unreadable one is replaced by the next sample. */
function latestOf(last: { at: number; json: string } | undefined): Latest | undefined {
  if (!last) return undefined;
  try {
    return { at: last.at, metrics: JSON.parse(last.json) as CompoundMetrics };
  } catch {
    return undefined;
  }
}

export { EMBEDDED_ID };
