// The ownership of `serve --database`: several instances on one PostgreSQL, behind a load balancer,
// as one server. Connections, history and alerts are the database's, read on every request, so a
// connection added on one instance is listed by the next request to any other.
//
// - Each connection is sampled by one instance at a time: the one holding it on its monitor session
//   (SharedMonitorStore.openSession; on PostgreSQL an advisory lock, store/pg/monitor-session.ts).
//   Every instance claims the enabled connections every CLAIM_EVERY_MS and when another announces a
//   change; an instance that stops or dies loses its session, and with it what it held, and the next
//   claim elsewhere takes over. Samples are written on that session, so one cut off from the
//   database cannot write after another took over.
// - The sampling instance holds the connection's history in memory, as one server does, and is the
//   only writer of its rows; the others follow the rows incrementally when asked for a range.
// - The embedded connection ("this server") is one row for the whole deployment, sampled like a remote
//   one by whoever holds it: in database mode the job system is shared, so its compound_metrics are
//   the deployment's. One history per instance would show the same numbers twice, sampled twice.
import crypto from 'node:crypto';
import type { Cancel } from '../clock.ts';
import type { MonitorSession, SharedMonitorStore } from '../store/ports/monitor-ports.ts';
import { cutsOf, RAW, ROLLUP, type ConnectionHistory, type Retention } from './connection-history.ts';
import { BufferedHistory, applyOps } from './buffered-history.ts';
import type { Ownership, OwnershipHost, Recorder, SampleWrites } from './ownership.ts';
import { applyJudgement } from './alerts.ts';

/** How often each instance claims connections nobody samples (one that died is taken over within this). */
export const CLAIM_EVERY_MS = 1_000;

interface Owned {
  h: ConnectionHistory;
  buf: BufferedHistory;
}

export class SharedOwnership implements Ownership {
  /** Every sample: the other instances answer `current` from the stored one. */
  readonly fullSampleEveryMs = -Infinity;
  private readonly instanceId = crypto.randomBytes(6).toString('hex');
  private session: MonitorSession | null = null;
  private opening: Promise<void> | null = null;
  /** Connections this instance samples: their history, loaded when the claim took them. */
  private readonly owned = new Map<string, Promise<Owned>>();
  /** Histories of connections another instance samples, following the rows it writes. */
  private readonly followed = new Map<string, { h: ConnectionHistory; refresh: Promise<void> | null }>();
  private claiming: Promise<void> | null = null;
  private claimAgain = false;
  private claimTimer: Cancel | null = null;
  private stopped = false;

  constructor(
    private readonly store: SharedMonitorStore,
    private readonly host: OwnershipHost,
    private readonly claimEveryMs = CLAIM_EVERY_MS,
  ) {}

  async start(): Promise<void> {
    await this.openSession();
    await this.claim();
    this.claimTimer = this.host.clock.every(this.claimEveryMs, () => this.claimSoon());
  }

  holds(id: string): boolean {
    return this.owned.has(id);
  }

  samplesStill(id: string): boolean {
    return this.owned.has(id);
  }

  async historyOf(id: string): Promise<ConnectionHistory> {
    const owned = this.owned.get(id);
    if (owned) {
      try {
        return (await owned).h;
      } catch {
        /* let go of: read as a follower */
      }
    }
    let f = this.followed.get(id);
    if (!f) this.followed.set(id, (f = { h: this.host.newHistory(id, new BufferedHistory()), refresh: null }));
    const entry = f;
    entry.refresh ??= this.follow(entry.h).finally(() => (entry.refresh = null));
    await entry.refresh;
    return entry.h;
  }

  recorder(id: string): Promise<Recorder> | undefined {
    const owning = this.owned.get(id);
    const session = this.session;
    if (!owning || !session) return undefined;
    return owning.then(({ h, buf }) => ({ history: h, commit: (record) => this.commit(id, owning, session, buf, record) }));
  }

  announce(id: string): Promise<void> {
    return this.session?.announce(id) ?? Promise.resolve();
  }

  claimSoon(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claim()
      .catch((err: unknown) => this.host.warn(`monitor: claiming connections failed: ${(err as Error).message}`))
      .finally(() => {
        this.claiming = null;
        if (this.claimAgain) {
          this.claimAgain = false;
          this.claimSoon();
        }
      });
  }

  release(id: string): boolean {
    const held = this.owned.delete(id);
    if (this.session?.alive) this.host.track(this.session.release(id));
    return held;
  }

  forget(id: string): void {
    this.followed.delete(id);
  }

  /** Every connection's rows, held or not (rows of a disabled one age too); any instance may run it. */
  async prune(now: number, retention: Retention): Promise<void> {
    const { rawCut, allCut } = cutsOf(now, retention);
    for (const c of await this.store.connections.list()) {
      await this.store.history.deleteBefore(c.id, RAW, rawCut);
      await this.store.history.deleteBefore(c.id, ROLLUP, allCut);
    }
  }

  inFlight(): Promise<unknown>[] {
    const waits: Promise<unknown>[] = [...this.owned.values()];
    if (this.claiming) waits.push(this.claiming);
    if (this.opening) waits.push(this.opening);
    return waits;
  }

  busy(): boolean {
    return this.claiming !== null || this.opening !== null;
  }

  halt(): void {
    this.stopped = true;
    this.claimTimer?.();
    this.claimTimer = null;
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.claiming, this.opening]);
    // Frees the locks and tells the others, who take over at once.
    await this.session?.close();
    this.session = null;
  }

  private openSession(): Promise<void> {
    this.opening ??= this.store
      .openSession({
        instanceId: this.instanceId,
        onLost: (err) => this.lost(err),
        onChange: (id) => this.heard(id),
        onError: (err) => this.host.warn(err.message),
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
    this.host.warn(`monitor: lost its database session (${err.message}); sampling stops here until it is back`);
    for (const id of [...this.owned.keys()]) this.host.letGo(id);
    this.session = null;
  }

  private heard(id: string): void {
    if (id === '') return this.claimSoon();
    this.host.track(this.store.connections.get(id).then((c) => (c ? this.host.changed(c) : this.host.removed(id))));
  }

  /** Takes the enabled connections no instance holds; lets go of those no longer to be sampled. */
  private async claim(): Promise<void> {
    if (!this.session?.alive) await this.openSession();
    const session = this.session;
    if (!session?.alive || this.stopped) return;
    const enabled = (await this.store.connections.list()).filter((c) => c.enabled).map((c) => c.id);
    const held = await session.claim(enabled);
    for (const id of held) {
      if (this.owned.has(id)) continue;
      this.followed.delete(id);
      const loading = this.loadOwned(id);
      this.owned.set(id, loading);
      loading.then(
        // Unless let go of while loading (disabled, removed, the session lost).
        () => this.owned.get(id) === loading && this.host.schedule(id),
        (err: unknown) => {
          this.host.warn(`monitor: loading the history of ${id} failed: ${(err as Error).message}`);
          this.host.letGo(id);
        },
      );
    }
    const keep = new Set(enabled);
    for (const id of [...this.owned.keys()]) if (!keep.has(id)) this.host.letGo(id);
  }

  private async loadOwned(id: string): Promise<Owned> {
    // Rows first, names after: names are written with (or before) the rows that use them.
    const rows = await this.store.history.samples(id);
    const names = await this.store.history.queueNames(id);
    const buf = new BufferedHistory({ names, rows });
    const h = this.host.newHistory(id, buf);
    h.load(this.host.clock.now());
    this.host.loadLatest(id, await this.store.connections.lastSample(id));
    // What load() pruned is deleted with the first sample's writes.
    return { h, buf };
  }

  /** Reads what the sampling instance stored since this one last looked. */
  private async follow(h: ConnectionHistory): Promise<void> {
    const id = h.connectionId;
    // Raw rows, then rollups, then names: each is written in the transaction of (or before) a later
    // raw row, so nothing read refers to a name or a minute not read yet.
    const raw = await this.store.history.samplesAfter(id, RAW, h.raw.lastT);
    const rollups = await this.store.history.samplesAfter(id, ROLLUP, h.rollup.lastT);
    const names = await this.store.history.queueNamesFrom(id, h.names.length);
    h.follow(names, [...rollups, ...raw], this.host.clock.now());
  }

  /** One sample's rows, the connection's health and its alerts, in one transaction on the session. */
  private async commit(id: string, owning: Promise<Owned>, session: MonitorSession, buf: BufferedHistory, record: () => SampleWrites): Promise<void> {
    const w = record();
    const ops = buf.take();
    try {
      await session.write(async (repos) => {
        await applyOps(repos.history, id, ops);
        await repos.connections.setHealth(id, w.at, w.error, w.sampleJson);
        const alerts = repos.alerts;
        if (w.alerts)
          await applyJudgement(
            { firing: (id) => alerts.firing(id), add: (a) => alerts.addInCommitOrder(a), resolve: (ids, at) => alerts.resolve(ids, at), trimResolved: (n) => alerts.trimResolved(n) },
            w.alerts,
          );
      });
    } catch (err) {
      // Memory is ahead of the rows now: start again from the rows (the claim takes it back if still held).
      if (this.owned.get(id) === owning) {
        this.owned.delete(id);
        this.host.unload(id);
        this.claimSoon();
      }
      if (!(await this.store.connections.get(id).catch(() => true))) return; // deleted meanwhile: nothing to report
      throw err;
    }
  }
}
