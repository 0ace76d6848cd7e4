// One resolution of a connection's history, held in memory as columns (typed arrays), so a
// 7-day range query is a tight loop over numbers rather than a database scan. The database
// rows are the durable copy; this is rebuilt from them at start.
import { NS, NT, type QueueTriples } from './sample-codec.ts';

export class Tier {
  len = 0;
  private cap: number;
  t: Float64Array;
  /** Good samples folded into the row: 1 for a raw sample, up to 60/interval for a rollup; 0 = gap. */
  n: Float64Array;
  tot: Float64Array;
  /** Sidekiq's set sizes per row (sample-codec's S), NaN where the sample had none. */
  sets: Float64Array;
  /** Per queue index: [backlog, latency] per row, NaN where the queue was absent. */
  q: (Float32Array | undefined)[] = [];
  /** Error text of gap rows, by row time. */
  errors = new Map<number, string>();

  constructor(initialCap = 256) {
    this.cap = initialCap;
    this.t = new Float64Array(initialCap);
    this.n = new Float64Array(initialCap);
    this.tot = new Float64Array(initialCap * NT);
    this.sets = new Float64Array(initialCap * NS).fill(NaN);
  }

  get lastT(): number {
    return this.len ? this.t[this.len - 1]! : -Infinity;
  }

  push(t: number, n: number, tot: ArrayLike<number> | undefined, queues: QueueTriples, error?: string, sets?: ArrayLike<number>): void {
    if (this.len === this.cap) this.grow();
    const i = this.len++;
    this.t[i] = t;
    this.n[i] = n;
    const base = i * NT;
    for (let k = 0; k < NT; k++) this.tot[base + k] = tot ? tot[k]! : NaN;
    for (let k = 0; k < NS; k++) this.sets[i * NS + k] = sets ? sets[k]! : NaN;
    for (let k = 0; k < queues.length; k += 3) {
      const col = this.column(queues[k]!);
      col[i * 2] = queues[k + 1]!;
      col[i * 2 + 1] = queues[k + 2]!;
    }
    if (error !== undefined) this.errors.set(t, error);
  }

  /** First row index with t >= time (binary search). */
  lowerBound(time: number): number {
    let lo = 0;
    let hi = this.len;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.t[mid]! < time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Forgets rows older than `time`; returns how many went. */
  dropBefore(time: number): number {
    const k = this.lowerBound(time);
    if (k === 0) return 0;
    for (let i = 0; i < k; i++) this.errors.delete(this.t[i]!);
    this.t.copyWithin(0, k, this.len);
    this.n.copyWithin(0, k, this.len);
    this.tot.copyWithin(0, k * NT, this.len * NT);
    this.sets.copyWithin(0, k * NS, this.len * NS);
    this.q.forEach((col, idx) => {
      if (!col) return;
      col.copyWithin(0, k * 2, this.len * 2);
      col.fill(NaN, (this.len - k) * 2, this.len * 2);
      // A queue in none of the rows kept (deleted, forgotten, renamed) gives its column back:
      // each costs 8 bytes a row, and queue names come and go.
      if (!hasValue(col, (this.len - k) * 2)) this.q[idx] = undefined;
    });
    this.len -= k;
    return k;
  }

  private column(idx: number): Float32Array {
    let col = this.q[idx];
    if (!col) {
      col = new Float32Array(this.cap * 2).fill(NaN);
      this.q[idx] = col;
    }
    return col;
  }

  private grow(): void {
    const cap = this.cap * 2;
    const t = new Float64Array(cap);
    t.set(this.t);
    this.t = t;
    const n = new Float64Array(cap);
    n.set(this.n);
    this.n = n;
    const tot = new Float64Array(cap * NT);
    tot.set(this.tot);
    this.tot = tot;
    const sets = new Float64Array(cap * NS).fill(NaN);
    sets.set(this.sets);
    this.sets = sets;
    this.q = this.q.map((col) => {
      if (!col) return col;
      const next = new Float32Array(cap * 2).fill(NaN);
      next.set(col);
      return next;
    });
    this.cap = cap;
  }
}

function hasValue(col: Float32Array, end: number): boolean {
  for (let i = 0; i < end; i += 2) if (!Number.isNaN(col[i]!)) return true;
  return false;
}
