// The monitor of `serve --database` (issue 13): several instances on one PostgreSQL, behind a load
// balancer, as one server. monitor.ts is the single-server one on SQLite; this one keeps its
// connections, history and alerts in the database and answers the routes with promises (the routes
// await either: app-api/connections.ts, history.ts, alerts.ts).
//
// - Connections, alerts and the latest sample are read from the database on every request, so a
//   connection added on one instance is listed by the next request to any other, and an alert one
//   instance raised is in every instance's /alerts.
// - Each connection is sampled by one instance at a time: the one holding its advisory lock on the
//   monitor's session (store/pg/monitor-session.ts). Every instance claims the enabled connections
//   every CLAIM_EVERY_MS and when another announces a change; an instance that stops or dies loses
//   its session, and with it its locks, and the next claim elsewhere takes over. Samples are written
//   on that session, so one cut off from the database cannot write after another took over.
// - The sampling instance holds the connection's history in memory, as monitor.ts does, and is the
//   only writer of its rows; the others follow the rows incrementally when asked for a range.
// - The embedded connection ("this server") is one row for the whole deployment, sampled like a remote
//   one by whoever holds it: in database mode the job system is shared (PostgreSQL's job tables, or
//   Redis), so its compound_metrics are the deployment's, the same read from either instance. One
//   history per instance would show the same numbers twice, sampled twice.
import crypto from 'node:crypto';
import type { Pool } from 'pg';
import type { AppContext } from '../context.ts';
import type { Service } from '../lifecycle.ts';
import type { Cancel, Clock } from '../clock.ts';
import type { Alert, History, Thresholds } from '../contract/app.ts';
import type { CompoundMetrics } from '../contract/metrics.ts';
import type { Connection, ConnectionFields } from '../store/monitor-ports.ts';
import { pgMonitorStore, reposOn, type PgMonitorStore } from '../store/pg/monitor-store.ts';
import { openMonitorSession, type MonitorSession } from '../store/pg/monitor-session.ts';
import { DEFAULT_INTERVAL_S, EMBEDDED_ID } from './connections.ts';
import { ConnectionHistory, RAW, ROLLUP, type SampleRates } from './connection-history.ts';
import { judgeSample, type Check } from './alerts.ts';
import { Sampler } from './sampler.ts';
import { SidekiqSources, sidekiqOptionsOf } from '../sidekiq/sources.ts';
import { probeConnection, readConnection, sourcesOf, type SourceDeps } from './read-source.ts';
import type { FetchOutcome } from './remote-client.ts';
import { queryHistory, type HistoryParams } from './downsample.ts';
import { BufferedHistory, applyOps } from './buffered-history.ts';
import type { Latest, MonitorLog } from './monitor.ts';

const HOUR = 3_600_000;
/** How often each instance claims connections nobody samples (one that died is taken over within this). */
export const CLAIM_EVERY_MS = 1_000;

export interface SharedMonitorOptions {
  pool: Pool;
  /** The database's URL: the monitor's session is a connection of its own, not one of the pool's. */
  url: string;
  claimEveryMs?: number;
}

interface Owned {
  h: ConnectionHistory;
  buf: BufferedHistory;
}

/** ConnectionsRepo on the database, with the ids and times the monitor decides and changes announced. */
export class SharedConnections {
  constructor(
    private readonly store: PgMonitorStore,
    private readonly clock: Clock,
    private readonly announce: (id: string) => Promise<void>,
  ) {}

  list(): Promise<Connection[]> {
    return this.store.connections.list();
  }

  get(id: string): Promise<Connection | undefined> {
    return this.store.connections.get(id);
  }

  async create(c: ConnectionFields & { baseUrl: string; token: string; kind?: 'gitlab' | 'sidekiq' }): Promise<Connection> {
    const prefix = c.kind === 'sidekiq' ? 'sk' : 'gl';
    const made = await this.store.connections.create(`${prefix}-${crypto.randomBytes(5).toString('hex')}`, c, this.clock.now());
    await this.announce(made.id);
    return made;
  }

  async update(id: string, patch: Partial<ConnectionFields>): Promise<Connection | undefined> {
    const c = await this.store.connections.update(id, patch);
    if (c) await this.announce(id);
    return c;
  }

  /** Not announced: the sampling instance reads the connection (thresholds too) afresh at every sample. */
  setThresholds(id: string, t: Thresholds): Promise<void> {
    return this.store.connections.setThresholds(id, t);
  }

  async remove(id: string): Promise<boolean> {
    const gone = await this.store.connections.remove(id);
    if (gone) await this.announce(id);
    return gone;
  }
}

export class SharedMonitor implements Service {
  readonly name = 'monitor';
  readonly connections: SharedConnections;
  readonly alerts: { since(sinceId: number, limit?: number, connectionId?: string): Promise<Alert[]> };
  readonly sidekiq: SidekiqSources;
  private readonly store: PgMonitorStore;
  private readonly sources: SourceDeps;
  private readonly sampler: Sampler;
  private readonly instanceId = crypto.randomBytes(6).toString('hex');
  private readonly claimEveryMs: number;
  private session: MonitorSession | null = null;
  private opening: Promise<void> | null = null;
  /** Connections this instance samples: their history, loaded when the lock was taken. */
  private readonly owned = new Map<string, Promise<Owned>>();
  /** Histories of connections another instance samples, following the rows it writes. */
  private readonly followed = new Map<string, { h: ConnectionHistory; refresh: Promise<void> | null }>();
  private readonly latest = new Map<string, Latest>();
  private readonly failing = new Map<string, boolean>();
  private readonly over = new Map<string, Set<string>>();
  private claiming: Promise<void> | null = null;
  private claimAgain = false;
  private readonly pending = new Set<Promise<unknown>>();
  private timers: Cancel[] = [];
  private stopped = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly log: MonitorLog,
    readonly clock: Clock,
    private readonly opts: SharedMonitorOptions,
  ) {
    this.store = pgMonitorStore(opts.pool);
    this.claimEveryMs = opts.claimEveryMs ?? CLAIM_EVERY_MS;
    this.connections = new SharedConnections(this.store, clock, (id) => this.session?.announce(opts.pool, id) ?? Promise.resolve());
    this.alerts = { since: (sinceId, limit = 500, connectionId) => this.store.alerts.since(sinceId, limit, connectionId) };
    this.sidekiq = new SidekiqSources(() => sidekiqOptionsOf(ctx.config));
    this.sources = sourcesOf(ctx, this.sidekiq);
    this.sampler = new Sampler(
      {
        // Only what this instance holds: a connection it let go of is someone else's to sample.
        get: (id) => (this.owned.has(id) ? this.connections.get(id) : undefined),
        sample: (c, signal) => this.sampleOnce(c, signal),
        intervalMs: (c) => this.intervalMs(c),
        onError: (err, c) => log.warn(`sampling connection ${c.id} failed: ${(err as Error).message}`),
      },
      clock,
    );
  }

  async start(): Promise<void> {
    await this.store.connections.ensureEmbedded(EMBEDDED_ID, DEFAULT_INTERVAL_S, this.clock.now());
    await this.openSession();
    await this.claim();
    this.timers.push(this.clock.every(this.claimEveryMs, () => this.claimSoon()));
    this.timers.push(this.clock.every(HOUR, () => this.track(this.prune(this.clock.now()))));
    await this.prune(this.clock.now());
  }

  intervalMs(c: Connection): number {
    return this.ctx.config.monitorIntervalMs > 0 ? this.ctx.config.monitorIntervalMs : c.intervalS * 1000;
  }

  /** Whether this instance samples the connection now (tests; the others follow its rows). */
  samples(id: string): boolean {
    return this.owned.has(id);
  }

  async history(c: Connection, p: Omit<HistoryParams, 'intervalMs'>): Promise<History> {
    const h = await this.historyOf(c.id);
    return { ...queryHistory(h, { ...p, intervalMs: this.intervalMs(c) }), queues_untracked: h.untracked, history_max_queues: h.maxQueues };
  }

  /** The latest good sample: from memory where this instance took it, else as the sampler stored it (every sample, here). */
  async current(id: string): Promise<Latest | undefined> {
    if (this.owned.has(id) && this.latest.has(id)) return this.latest.get(id);
    const last = await this.store.connections.lastSample(id);
    if (!last) return undefined;
    try {
      return { at: last.at, metrics: JSON.parse(last.json) as CompoundMetrics };
    } catch {
      return undefined;
    }
  }

  /** This instance created or changed `c` (the others hear it through the session). */
  changed(c: Connection): void {
    if (this.owned.has(c.id)) {
      if (c.enabled) this.sampler.schedule(c.id);
      else this.letGo(c.id);
    } else if (c.enabled) this.claimSoon();
  }

  /** Called before the row is deleted: nothing more is sampled or written for it here. */
  removed(id: string): void {
    this.letGo(id);
    this.forget(id);
  }

  sampleNow(id: string): Promise<void> {
    return this.sampler.sampleNow(id);
  }

  probe(c: Pick<Connection, 'kind' | 'baseUrl' | 'token' | 'apiVersion' | 'segment'>): Promise<FetchOutcome> {
    return probeConnection(c, this.sources);
  }

  /** Resolves once no claim, load or sample is in flight (a test steps a ManualClock, then waits on this). */
  async idle(): Promise<void> {
    for (;;) {
      const waits = [...this.pending, ...this.owned.values(), this.sampler.idle()];
      if (this.claiming) waits.push(this.claiming);
      if (this.opening) waits.push(this.opening);
      await Promise.allSettled(waits);
      if (!this.pending.size && !this.claiming && !this.opening) return this.sampler.idle();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const cancel of this.timers) cancel();
    this.timers = [];
    this.sidekiq.closeAll();
    await this.sampler.close();
    await Promise.allSettled([this.claiming, this.opening, ...this.pending]);
    // Frees the locks and tells the others, who take over at once.
    await this.session?.close();
    this.session = null;
    this.sidekiq.closeAll();
  }

  private track(p: Promise<unknown>): void {
    const t = p
      .catch((err: unknown) => this.log.warn(`monitor: ${(err as Error).message}`))
      .finally(() => this.pending.delete(t));
    this.pending.add(t);
  }

  private openSession(): Promise<void> {
    this.opening ??= openMonitorSession(this.opts.url, {
      instanceId: this.instanceId,
      onLost: (err) => this.lost(err),
      onChange: (id) => this.heard(id),
      onError: (err) => this.log.warn(err.message),
    })
      .then((s) => {
        if (this.stopped) return void s.close();
        this.session = s;
      })
      .finally(() => (this.opening = null));
    return this.opening;
  }

  /** The session is gone and its locks with it: another instance may be sampling already. */
  private lost(err: Error): void {
    this.log.warn(`monitor: lost its database session (${err.message}); sampling stops here until it is back`);
    for (const id of [...this.owned.keys()]) this.letGo(id);
    this.session = null;
  }

  private heard(id: string): void {
    if (id === '') return this.claimSoon();
    this.track(
      this.connections.get(id).then((c) => {
        if (!c) return this.removed(id);
        if (this.owned.has(id)) {
          if (c.enabled) this.sampler.schedule(id);
          else this.letGo(id);
        } else if (c.enabled) this.claimSoon();
      }),
    );
  }

  private claimSoon(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claim()
      .catch((err: unknown) => this.log.warn(`monitor: claiming connections failed: ${(err as Error).message}`))
      .finally(() => {
        this.claiming = null;
        if (this.claimAgain) {
          this.claimAgain = false;
          this.claimSoon();
        }
      });
  }

  /** Takes the enabled connections no instance holds; lets go of those no longer to be sampled. */
  private async claim(): Promise<void> {
    if (!this.session?.alive) await this.openSession();
    const session = this.session;
    if (!session?.alive || this.stopped) return;
    const enabled = (await this.connections.list()).filter((c) => c.enabled).map((c) => c.id);
    const held = await session.claim(enabled);
    for (const id of held) {
      if (this.owned.has(id)) continue;
      this.followed.delete(id);
      const loading = this.loadOwned(id);
      this.owned.set(id, loading);
      loading.then(
        // Unless let go of while loading (disabled, removed, the session lost).
        () => this.owned.get(id) === loading && this.sampler.schedule(id),
        (err: unknown) => {
          this.log.warn(`monitor: loading the history of ${id} failed: ${(err as Error).message}`);
          this.letGo(id);
        },
      );
    }
    const keep = new Set(enabled);
    for (const id of [...this.owned.keys()]) if (!keep.has(id)) this.letGo(id);
  }

  private async loadOwned(id: string): Promise<Owned> {
    // Rows first, names after: names are written with (or before) the rows that use them.
    const rows = await this.store.history.samples(id);
    const names = await this.store.history.queueNames(id);
    const buf = new BufferedHistory({ names, rows });
    const h = this.newHistory(id, buf);
    h.load(this.clock.now());
    const last = await this.store.connections.lastSample(id);
    if (last) {
      try {
        this.latest.set(id, { at: last.at, metrics: JSON.parse(last.json) as CompoundMetrics });
      } catch {
        /* an unreadable cached sample is replaced by the next one */
      }
    }
    // What load() pruned is deleted with the first sample's writes.
    return { h, buf };
  }

  private letGo(id: string): void {
    this.sampler.stop(id);
    this.sidekiq.drop(id);
    if (this.owned.delete(id)) this.over.delete(id);
    this.latest.delete(id);
    if (this.session?.alive) this.track(this.session.release(id));
  }

  private forget(id: string): void {
    this.followed.delete(id);
    this.latest.delete(id);
    this.failing.delete(id);
    this.over.delete(id);
  }

  private newHistory(id: string, buf: BufferedHistory): ConnectionHistory {
    return new ConnectionHistory(buf, id, { rawMs: this.ctx.config.historyRawHours * HOUR, totalMs: this.ctx.config.historyDays * 24 * HOUR }, this.ctx.config.historyMaxQueues);
  }

  private async historyOf(id: string): Promise<ConnectionHistory> {
    const owned = this.owned.get(id);
    if (owned) {
      try {
        return (await owned).h;
      } catch {
        /* let go of: read as a follower */
      }
    }
    let f = this.followed.get(id);
    if (!f) this.followed.set(id, (f = { h: this.newHistory(id, new BufferedHistory()), refresh: null }));
    const entry = f;
    entry.refresh ??= this.follow(entry.h).finally(() => (entry.refresh = null));
    await entry.refresh;
    return entry.h;
  }

  /** Reads what the sampling instance stored since this one last looked. */
  private async follow(h: ConnectionHistory): Promise<void> {
    const id = h.connectionId;
    // Raw rows, then rollups, then names: each is written in the transaction of (or before) a later
    // raw row, so nothing read refers to a name or a minute not read yet.
    const raw = await this.store.history.samplesAfter(id, RAW, h.raw.lastT);
    const rollups = await this.store.history.samplesAfter(id, ROLLUP, h.rollup.lastT);
    const names = await this.store.history.queueNamesFrom(id, h.names.length);
    h.follow(names, [...rollups, ...raw], this.clock.now());
  }

  private async sampleOnce(c: Connection, signal: AbortSignal): Promise<void> {
    const t = this.clock.now();
    const { metrics, error, queuesLeftOut } = await readConnection(c, signal, this.sources);
    if (signal.aborted || !this.owned.has(c.id)) return; // closing, or let go of while we waited
    await this.record(c, t, metrics, error, queuesLeftOut);
  }

  /** Stores one sample (good or a gap) with the connection's health and the alerts it raised, in one transaction on the session. */
  private async record(c: Connection, t: number, metrics: CompoundMetrics | null, error: string, queuesLeftOut = 0): Promise<void> {
    const owning = this.owned.get(c.id);
    const session = this.session;
    if (!owning || !session) return;
    const { h, buf } = await owning;
    const wasFailing = this.failing.get(c.id) ?? c.lastError !== null;
    this.failing.set(c.id, !metrics);
    if (!metrics && !wasFailing) this.log.warn(`connection ${c.id} (${c.name}): sampling fails: ${error}`);
    if (metrics && wasFailing) this.log.info(`connection ${c.id} (${c.name}): sampling works again`);
    let checks: Check[] = [];
    if (metrics) {
      const rates: SampleRates = h.recordGood(t, metrics, queuesLeftOut);
      checks = judgeSample(this.over, c.id, c.thresholds, metrics, rates.failedRate);
    } else h.recordGap(t, error);
    const ops = buf.take();
    try {
      await session.write(async (db) => {
        const repos = reposOn(db);
        await applyOps(repos.history, c.id, ops);
        // Every sample, not every 30 s as on SQLite: the other instances answer /current from it.
        await repos.connections.setHealth(c.id, t, metrics ? null : error, metrics ? JSON.stringify(metrics) : undefined);
        for (const a of checks) await repos.alerts.addInCommitOrder({ connectionId: c.id, kind: a.kind, queue: a.queue, value: a.value, threshold: a.threshold, at: t });
      });
    } catch (err) {
      // Memory is ahead of the rows now: start again from the rows (the claim takes it back if still held).
      if (this.owned.get(c.id) === owning) {
        this.owned.delete(c.id);
        this.over.delete(c.id);
        this.sampler.stop(c.id);
        this.claimSoon();
      }
      if (!(await this.connections.get(c.id).catch(() => c))) return; // deleted meanwhile: nothing to report
      throw err;
    }
    if (metrics) this.latest.set(c.id, { at: t, metrics });
  }

  /** Retention for every connection, held or not (rows of a disabled one age too); any instance may run it. */
  private async prune(now: number): Promise<void> {
    const rawCut = Math.floor((now - this.ctx.config.historyRawHours * HOUR) / 60_000) * 60_000;
    const allCut = now - this.ctx.config.historyDays * 24 * HOUR;
    for (const c of await this.connections.list()) {
      await this.store.history.deleteBefore(c.id, RAW, rawCut);
      await this.store.history.deleteBefore(c.id, ROLLUP, allCut);
    }
    await this.store.alerts.deleteBefore(allCut);
  }
}
