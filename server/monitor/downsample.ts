// A time range of one connection's history, downsampled to at most `points` buckets per series.
// The coarsest tier that still gives enough points is read: 1-minute rollups once a bucket spans
// a minute or more (a 7-day range reads ~10k rows, not ~120k), raw samples below that. One pass
// over typed columns; queues are only aggregated for the series asked for.
import type { History } from '../../contract/app.ts';
import { NS, NT, S, T } from './sample-codec.ts';
import type { Tier } from './tier.ts';
import type { ConnectionHistory } from './connection-history.ts';
import { MINUTE } from './rollup.ts';

export interface HistoryParams {
  from: number;
  to: number;
  points: number;
  /** Explicit queue names; otherwise the `top` queues by peak backlog. */
  queues?: string[];
  top: number;
  /** The connection's sampling interval: a stretch without rows longer than 2.5 of these is a gap. */
  intervalMs: number;
}

interface Segment {
  tier: Tier;
  start: number;
  end: number; // exclusive
}

function segmentsOf(h: ConnectionHistory, from: number, to: number, coarse: boolean): Segment[] {
  // Rollups hold every completed minute; raw rows hold the recent window including the open minute.
  let cut: number;
  if (coarse) cut = h.rollupEnd;
  else cut = h.raw.len ? Math.floor(h.raw.t[0]! / MINUTE) * MINUTE : Infinity;
  const out: Segment[] = [];
  const add = (tier: Tier, lo: number, hiExclusive: number) => {
    if (lo >= hiExclusive) return;
    const start = tier.lowerBound(lo);
    const end = tier.lowerBound(hiExclusive);
    if (end > start) out.push({ tier, start, end });
  };
  add(h.rollup, from, Math.min(cut, to + 1));
  add(h.raw, Math.max(from, cut), to + 1);
  return out;
}

const round = (v: number) => Math.round(v * 1000) / 1000;

export function queryHistory(h: ConnectionHistory, p: HistoryParams): History {
  const from = Math.floor(p.from);
  const to = Math.max(from, Math.floor(p.to));
  const points = Math.max(2, p.points);
  const want = Math.ceil(Math.max(1, to - from) / (points - 1));
  const coarse = want >= MINUTE;
  // Buckets finer than the sampling interval are fine: only buckets holding rows are emitted.
  const step = Math.max(want, coarse ? MINUTE : 1000);
  const segs = segmentsOf(h, from, to, coarse);

  // Pass 1: peak backlog of every queue seen in the range.
  const nq = h.names.length;
  const peak = new Float64Array(nq).fill(-Infinity);
  for (const { tier, start, end } of segs) {
    for (let idx = 0; idx < nq; idx++) {
      const col = tier.q[idx];
      if (!col) continue;
      let m = peak[idx]!;
      for (let i = start; i < end; i++) {
        const v = col[i * 2]!;
        if (v > m) m = v;
      }
      peak[idx] = m;
    }
  }
  const seen: number[] = [];
  for (let idx = 0; idx < nq; idx++) if (peak[idx]! > -Infinity) seen.push(idx);
  seen.sort((a, b) => peak[b]! - peak[a]! || (h.names[a]! < h.names[b]! ? -1 : 1));
  const queueNames = seen.map((idx) => h.names[idx]!);
  const wanted = p.queues && p.queues.length ? [...new Set(p.queues)] : queueNames.slice(0, p.top);
  const nameToIdx = new Map(h.names.map((n, i) => [n, i]));

  // Pass 2: per-bucket accumulators (dense, one slot per bucket of the range).
  const b0 = Math.floor(from / step);
  const nb = Math.floor(to / step) - b0 + 1;
  const w = new Float64Array(nb); // good samples in the bucket
  const rows = new Uint8Array(nb); // any row at all (good or gap)
  const gauges = new Float64Array(nb * 4); // enqueued, busy, concurrency, processes (weighted sums)
  const lastProcessed = new Float64Array(nb).fill(NaN);
  const lastFailed = new Float64Array(nb).fill(NaN);
  const inc = new Float64Array(nb * 3); // processed inc, failed inc, seconds
  const errors = new Map<number, string>();
  const failures = new Float64Array(nb); // failed samples folded into the bucket
  const qIdx = wanted.map((n) => nameToIdx.get(n));
  const qSum = wanted.map(() => new Float64Array(nb * 3)); // backlog sum, latency sum, weight
  const setSum = new Float64Array(nb * NS * 2); // per set: size sum, weight
  let anySets = false;
  for (const { tier, start, end } of segs) {
    const { t, n, tot } = tier;
    const cols = qIdx.map((idx) => (idx === undefined ? undefined : tier.q[idx]));
    for (let i = start; i < end; i++) {
      const b = Math.floor(t[i]! / step) - b0;
      rows[b] = 1;
      const o = i * NT;
      const err = tier.errors.get(t[i]!);
      if (err !== undefined) {
        if (!errors.has(b)) errors.set(b, err);
        // A raw gap is one failed sample; a rollup says how many it folded (rows before that: one).
        failures[b]! += tot[o + T.failedSamples]! > 0 ? tot[o + T.failedSamples]! : 1;
      }
      const c = n[i]!;
      if (c <= 0) continue;
      w[b]! += c;
      gauges[b * 4]! += tot[o + T.enqueued]! * c;
      gauges[b * 4 + 1]! += tot[o + T.busy]! * c;
      gauges[b * 4 + 2]! += tot[o + T.concurrency]! * c;
      gauges[b * 4 + 3]! += tot[o + T.processes]! * c;
      lastProcessed[b] = tot[o + T.processed]!;
      lastFailed[b] = tot[o + T.failed]!;
      const dt = tot[o + T.dt]!;
      if (dt > 0) {
        inc[b * 3]! += tot[o + T.processedInc]!;
        inc[b * 3 + 1]! += tot[o + T.failedInc]!;
        inc[b * 3 + 2]! += dt;
      }
      for (let k = 0; k < NS; k++) {
        const v = tier.sets[i * NS + k]!;
        if (Number.isNaN(v)) continue;
        anySets = true;
        setSum[(b * NS + k) * 2]! += v * c;
        setSum[(b * NS + k) * 2 + 1]! += c;
      }
      for (let k = 0; k < cols.length; k++) {
        const col = cols[k];
        if (!col) continue;
        const bl = col[i * 2]!;
        if (Number.isNaN(bl)) continue;
        const acc = qSum[k]!;
        acc[b * 3]! += bl * c;
        acc[b * 3 + 1]! += col[i * 2 + 1]! * c;
        acc[b * 3 + 2]! += c;
      }
    }
  }

  // Emit the buckets that hold rows; a stretch with none (server stopped) becomes one null bucket.
  const out: History = {
    from,
    to,
    step_ms: step,
    t: [],
    totals: { processed: [], failed: [], enqueued: [], busy: [], concurrency: [], processes: [], processed_rate: [], failed_rate: [] },
    queues: Object.fromEntries(wanted.map((name) => [name, { backlog: [] as (number | null)[], latency: [] as (number | null)[] }])),
    queue_names: queueNames,
    gaps: [],
  };
  const sets = anySets ? { retry: [] as (number | null)[], scheduled: [] as (number | null)[], dead: [] as (number | null)[] } : undefined;
  if (sets) out.sets = sets;
  const setSeries: (number | null)[][] = [];
  if (sets) [setSeries[S.retry], setSeries[S.scheduled], setSeries[S.dead]] = [sets.retry, sets.scheduled, sets.dead];
  const tt = out.totals;
  const series = wanted.map((name) => out.queues[name]!);
  const pushNull = (time: number) => {
    out.t.push(time);
    for (const s of Object.values(tt)) s.push(null);
    for (const s of setSeries) s.push(null);
    for (const s of series) {
      s.backlog.push(null);
      s.latency.push(null);
    }
  };
  const missingAfter = 2.5 * Math.max(step, p.intervalMs);
  let prevStart = NaN;
  for (let b = 0; b < nb; b++) {
    if (!rows[b]) continue;
    const start = (b0 + b) * step;
    if (start - prevStart > missingAfter) pushNull(prevStart + step);
    prevStart = start;
    const err = errors.get(b);
    if (err !== undefined) out.gaps.push({ t: start, error: err, count: failures[b]! });
    const c = w[b]!;
    if (c === 0) {
      pushNull(start);
      continue;
    }
    out.t.push(start);
    tt.enqueued.push(round(gauges[b * 4]! / c));
    tt.busy.push(round(gauges[b * 4 + 1]! / c));
    tt.concurrency.push(round(gauges[b * 4 + 2]! / c));
    tt.processes.push(round(gauges[b * 4 + 3]! / c));
    tt.processed.push(lastProcessed[b]!);
    tt.failed.push(lastFailed[b]!);
    const secs = inc[b * 3 + 2]!;
    tt.processed_rate.push(secs > 0 ? round(inc[b * 3]! / secs) : null);
    tt.failed_rate.push(secs > 0 ? round(inc[b * 3 + 1]! / secs) : null);
    for (let k = 0; k < setSeries.length; k++) {
      const sw = setSum[(b * NS + k) * 2 + 1]!;
      setSeries[k]!.push(sw > 0 ? round(setSum[(b * NS + k) * 2]! / sw) : null);
    }
    for (let k = 0; k < series.length; k++) {
      const acc = qSum[k]!;
      const qw = acc[b * 3 + 2]!;
      series[k]!.backlog.push(qw > 0 ? round(acc[b * 3]! / qw) : null);
      series[k]!.latency.push(qw > 0 ? round(acc[b * 3 + 1]! / qw) : null);
    }
  }
  return out;
}
