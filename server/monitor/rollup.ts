// Folds the samples of one minute into one row: gauges averaged over the good samples, counters
// as their last value, increments summed, so rates from rollups equal rates from raw samples.
import { NS, NT, T, noSets, type QueueTriples } from './sample-codec.ts';

export const MINUTE = 60_000;

export class MinuteRollup {
  minute = NaN;
  private n = 0;
  private gaps = 0;
  private firstError: string | undefined;
  private sums = new Float64Array(NT);
  private last = new Float64Array(NT);
  private queues = new Map<number, [number, number, number]>();
  /** Sums of the set sizes and how many samples had each. */
  private sets = new Float64Array(NS * 2);

  get empty(): boolean {
    return Number.isNaN(this.minute);
  }

  start(minute: number): void {
    this.minute = minute;
    this.n = 0;
    this.gaps = 0;
    this.firstError = undefined;
    this.sums.fill(0);
    this.sets.fill(0);
    this.queues.clear();
  }

  addGood(tot: ArrayLike<number>, queues: QueueTriples, sets: ArrayLike<number>): void {
    this.n++;
    for (let k = 0; k < NS; k++) {
      if (Number.isNaN(sets[k]!)) continue;
      this.sets[k * 2]! += sets[k]!;
      this.sets[k * 2 + 1]!++;
    }
    for (let k = 0; k < NT; k++) this.sums[k]! += tot[k]!;
    for (let k = 0; k < NT; k++) this.last[k] = tot[k]!;
    for (let k = 0; k < queues.length; k += 3) {
      const acc = this.queues.get(queues[k]!);
      if (acc) {
        acc[0] += queues[k + 1]!;
        acc[1] += queues[k + 2]!;
        acc[2]++;
      } else this.queues.set(queues[k]!, [queues[k + 1]!, queues[k + 2]!, 1]);
    }
  }

  addGap(error: string): void {
    this.firstError ??= error;
    this.gaps++;
  }

  /** The finished row: [n, totals (only failedSamples for an all-gap minute), queue triples, error]. */
  finish(): { t: number; n: number; tot: Float64Array; queues: QueueTriples; sets: Float64Array; error: string | undefined } {
    const t = this.minute;
    if (this.n === 0) {
      const tot = new Float64Array(NT).fill(NaN);
      tot[T.count] = 0;
      tot[T.failedSamples] = this.gaps;
      return { t, n: 0, tot, queues: [], sets: noSets(), error: this.firstError ?? 'no good sample' };
    }
    const tot = new Float64Array(NT);
    for (let k = 0; k < NT; k++) tot[k] = this.sums[k]! / this.n;
    tot[T.processed] = this.last[T.processed]!;
    tot[T.failed] = this.last[T.failed]!;
    tot[T.processedInc] = this.sums[T.processedInc]!;
    tot[T.failedInc] = this.sums[T.failedInc]!;
    tot[T.dt] = this.sums[T.dt]!;
    tot[T.count] = this.n;
    tot[T.failedSamples] = this.gaps;
    const queues: QueueTriples = [];
    for (const [idx, [b, l, c]] of this.queues) queues.push(idx, b / c, l / c);
    const sets = noSets();
    for (let k = 0; k < NS; k++) if (this.sets[k * 2 + 1]! > 0) sets[k] = this.sets[k * 2]! / this.sets[k * 2 + 1]!;
    // A minute with some failed samples keeps the first error, so coarse views still show the trouble.
    return { t, n: this.n, tot, queues, sets, error: this.firstError };
  }
}
