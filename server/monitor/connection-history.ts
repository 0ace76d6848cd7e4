// The sampled history of one connection: every sample for the raw window (24 h by default) and
// 1-minute rollups for the whole retention (7 days by default), both in memory as columns and in
// storage as compact rows (MonitorHistoryRepo). Writes are one row per sample plus one per minute.
import type { MonitorStore, SampleRow } from '../store/ports/monitor-ports.ts';
import type { CompoundMetrics } from '../../contract/metrics.ts';
import { NS, NT, T, encodeSample, decodeSample, type QueueTriples } from './sample-codec.ts';
import { setsOf } from './set-sizes.ts';
import { Tier } from './tier.ts';
import { MinuteRollup, MINUTE } from './rollup.ts';
import { RateWindow } from './rate-window.ts';
import { capacityOf, type LoadSample } from '../../common/capacity.ts';

export const RAW = 0;
export const ROLLUP = 1;

/** A counter diff longer than this spans downtime, not a rate worth drawing. */
const MAX_RATE_SPAN_MS = 10 * MINUTE;
/** Pruning shifts the in-memory columns; hourly keeps that cost negligible. */
const PRUNE_EVERY_MS = 60 * MINUTE;

export interface Retention {
  rawMs: number;
  totalMs: number;
}

/** What retention drops at `now`: raw rows before rawCut (whole minutes, as rollups cover them), rollups before allCut. */
export function cutsOf(now: number, retention: Retention): { rawCut: number; allCut: number } {
  return { rawCut: Math.floor((now - retention.rawMs) / MINUTE) * MINUTE, allCut: now - retention.totalMs };
}

export interface SampleRates {
  processedRate: number | null;
  failedRate: number | null;
}

export class ConnectionHistory {
  readonly raw = new Tier(1024);
  readonly rollup = new Tier(1024);
  /** Queue name → index in the rows; names in index order. */
  private readonly index = new Map<string, number>();
  readonly names: string[] = [];
  private readonly building = new MinuteRollup();
  /** Rates are taken over a window of recent readings, not from the previous one alone. */
  private readonly window = new RateWindow();
  private lastPrune = -Infinity;
  /** Queues the last sample recorded: they keep their place when more than maxQueues exist. */
  private tracked = new Set<string>();
  /** Queues of the last sample that were not recorded (past maxQueues). */
  untracked = 0;

  constructor(
    private readonly store: Pick<MonitorStore, 'history' | 'tx'>,
    readonly connectionId: string,
    private readonly retention: Retention,
    /** Most queues one sample records: 20,000 queues made every sample (and the day's history) huge. */
    readonly maxQueues = Infinity,
  ) {}

  /** Rebuilds memory from the database (start-up). */
  load(now: number): void {
    for (const r of this.store.history.queueNames(this.connectionId)) {
      this.index.set(r.name, r.idx);
      this.names[r.idx] = r.name;
    }
    for (const r of this.store.history.samples(this.connectionId)) this.pushStored(r);
    // Raw samples of the minute that was still open when the server stopped go back into the builder.
    const from = this.rollup.len ? this.rollup.lastT + MINUTE : -Infinity;
    // Minutes closed by nothing (should not happen, but a crash may leave one) are rolled up now.
    for (let i = this.raw.lowerBound(from); i < this.raw.len; i++) {
      this.closeMinuteIfDone(this.raw.t[i]!);
      this.feedRollup(i);
    }
    this.prune(now, true);
  }

  /**
   * Appends rows another instance stored (it samples this connection; this one only reads): names
   * and rows newer than what memory holds. Rollups are read as stored, never built here, so
   * rollupEnd is the last stored minute's end and queries read raw rows past it.
   */
  follow(names: Iterable<{ idx: number; name: string }>, rows: Iterable<SampleRow>, now: number): void {
    for (const r of names) {
      this.index.set(r.name, r.idx);
      this.names[r.idx] = r.name;
    }
    for (const r of rows) if (r.t > (r.tier === RAW ? this.raw : this.rollup).lastT) this.pushStored(r);
    this.dropFromMemory(now);
  }

  private pushStored(r: SampleRow): void {
    const tier = r.tier === RAW ? this.raw : this.rollup;
    if (r.data) {
      const { tot, queues, sets } = decodeSample(r.data);
      tier.push(r.t, tot[T.count]!, tot, queues, r.error ?? undefined, sets);
      if (r.tier === RAW) this.window.add(r.t, tot[T.processed]!, tot[T.failed]!, MAX_RATE_SPAN_MS);
    } else tier.push(r.t, 0, undefined, [], r.error ?? 'sample failed');
  }

  get lastT(): number {
    return this.raw.lastT;
  }

  /** Where rolled-up minutes end and only raw rows exist (the minute being built). */
  get rollupEnd(): number {
    return this.building.empty ? this.rollup.lastT + MINUTE : this.building.minute;
  }

  /** `leftOut`: queues the sample had but did not keep (sample-bounds.ts), counted as untracked. A sidekiq sample's details say which processes are quiet. */
  recordGood(t: number, m: CompoundMetrics & Pick<LoadSample, 'sidekiq'>, leftOut = 0): SampleRates {
    t = this.monotonic(t);
    const tot = new Float64Array(NT);
    tot[T.processed] = m.jobs.processed;
    tot[T.failed] = m.jobs.failed;
    tot[T.enqueued] = m.jobs.enqueued;
    const { busy, concurrency } = capacityOf(m);
    tot[T.busy] = busy;
    tot[T.concurrency] = concurrency;
    tot[T.processes] = m.processes.length;
    tot[T.count] = 1;
    const sets = setsOf(m);
    let rates: SampleRates = { processedRate: null, failedRate: null };
    // Each row holds its window's change: windows overlap, but rollups and buckets divide summed
    // changes by summed seconds, which stays the average rate.
    const change = this.window.add(t, m.jobs.processed, m.jobs.failed, MAX_RATE_SPAN_MS);
    if (change) {
      tot[T.processedInc] = change.processedInc;
      tot[T.failedInc] = change.failedInc;
      tot[T.dt] = change.dt;
      rates = { processedRate: change.processedInc / change.dt, failedRate: change.failedInc / change.dt };
    }
    const queues: QueueTriples = [];
    const newNames: [number, string][] = [];
    const recorded = this.pickQueues(Object.entries(m.queues), leftOut);
    for (const [name, q] of recorded) {
      let idx = this.index.get(name);
      if (idx === undefined) {
        idx = this.names.length;
        this.index.set(name, idx);
        this.names.push(name);
        newNames.push([idx, name]);
      }
      queues.push(idx, q.backlog, q.latency);
    }
    this.store.tx(() => {
      for (const [idx, name] of newNames) this.store.history.setQueueName(this.connectionId, idx, name);
      this.closeMinuteIfDone(t);
      this.store.history.putSample(this.connectionId, { tier: RAW, t, error: null, data: encodeSample(tot, queues, sets) });
      this.raw.push(t, 1, tot, queues, undefined, sets);
      this.feedRollup(this.raw.len - 1);
    });
    return rates;
  }

  /**
   * At most maxQueues queues: those recorded last time first, then ones history already knows,
   * then new ones in the order the source lists them. The rest are counted, not sampled.
   */
  private pickQueues<Q>(entries: [string, Q][], leftOut: number): [string, Q][] {
    let picked = entries;
    if (entries.length > this.maxQueues) {
      const tiers: [string, Q][][] = [[], [], []];
      for (const e of entries) tiers[this.tracked.has(e[0]) ? 0 : this.index.has(e[0]) ? 1 : 2]!.push(e);
      picked = tiers.flat().slice(0, this.maxQueues);
    }
    this.untracked = entries.length - picked.length + leftOut;
    this.tracked = new Set(picked.map((e) => e[0]));
    return picked;
  }

  recordGap(t: number, error: string): void {
    t = this.monotonic(t);
    this.store.tx(() => {
      this.closeMinuteIfDone(t);
      this.store.history.putSample(this.connectionId, { tier: RAW, t, error, data: null });
      this.raw.push(t, 0, undefined, [], error);
      this.feedRollup(this.raw.len - 1);
    });
  }

  /** Drops what is past retention, in memory and on disk; at most hourly (retention is a floor, not exact). */
  prune(now: number, force = false): void {
    if (!force && now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    const { rawCut, allCut } = this.dropFromMemory(now);
    this.store.history.deleteBefore(this.connectionId, RAW, rawCut);
    this.store.history.deleteBefore(this.connectionId, ROLLUP, allCut);
  }

  /** Drops from memory what retention no longer keeps at `now`; answers where it cut. */
  private dropFromMemory(now: number): { rawCut: number; allCut: number } {
    const cuts = cutsOf(now, this.retention);
    this.raw.dropBefore(cuts.rawCut);
    this.rollup.dropBefore(cuts.allCut);
    return cuts;
  }

  private monotonic(t: number): number {
    // Rows are keyed by time; a clock stepping back must not overwrite or reorder history.
    return t <= this.raw.lastT ? this.raw.lastT + 1 : t;
  }

  private feedRollup(i: number): void {
    const t = this.raw.t[i]!;
    const minute = Math.floor(t / MINUTE) * MINUTE;
    if (this.building.empty) this.building.start(minute);
    if (this.raw.n[i]! > 0) {
      const queues: QueueTriples = [];
      for (let idx = 0; idx < this.raw.q.length; idx++) {
        const col = this.raw.q[idx];
        if (col && !Number.isNaN(col[i * 2]!)) queues.push(idx, col[i * 2]!, col[i * 2 + 1]!);
      }
      this.building.addGood(this.raw.tot.subarray(i * NT, i * NT + NT), queues, this.raw.sets.subarray(i * NS, i * NS + NS));
    } else this.building.addGap(this.raw.errors.get(t) ?? 'sample failed');
  }

  private closeMinuteIfDone(t: number): void {
    const minute = Math.floor(t / MINUTE) * MINUTE;
    if (this.building.empty || this.building.minute === minute) return;
    const row = this.building.finish();
    this.store.history.putSample(this.connectionId, { tier: ROLLUP, t: row.t, error: row.error ?? null, data: encodeSample(row.tot, row.queues, row.sets) });
    this.rollup.push(row.t, row.n, row.tot, row.queues, row.error, row.sets);
    this.building.start(minute);
    this.prune(t);
  }
}
