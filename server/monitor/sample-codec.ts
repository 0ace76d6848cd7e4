// One sample as stored: a fixed block of totals (Float64, counters exceed 2^24) followed by
// (queue index, backlog, latency) triples. Queue names live once in a per-connection dictionary,
// so a 50-queue sample is ~700 bytes instead of a JSON document five times that size.
export const T = {
  processed: 0,
  failed: 1,
  enqueued: 2,
  busy: 3,
  concurrency: 4,
  processes: 5,
  /** Jobs processed over the rate window ending at this sample (rate-window.ts), counter resets taken into account. */
  processedInc: 6,
  failedInc: 7,
  /** Seconds the two increments above cover (0 when there is no earlier sample to diff against). */
  dt: 8,
  /** Good samples folded into the row: 1 for a raw sample, the minute's count for a rollup. */
  count: 9,
  /** Failed samples folded into a rollup row: a coarse range counts the same failures as a fine one. */
  failedSamples: 10,
} as const;
export const NT = 11;
/** Totals of rows written before failedSamples existed: told apart by length (80 + 12k vs 88 + 12k bytes). */
const NT_BEFORE_FAILED_SAMPLES = 10;
/** Sidekiq's set sizes, which only a sidekiq connection's samples have: kept beside the totals. */
export const S = { retry: 0, scheduled: 1, dead: 2 } as const;
export const NS = 3;
/** A sample with set sizes stores a count word and the sizes after the totals: 120 + 12k bytes, so the length tells all three layouts apart. */
const SETS_BYTES = 8 + NS * 8;

/** NaN for each size when the sample has none (not a sidekiq connection's). */
export function noSets(): Float64Array {
  return new Float64Array(NS).fill(NaN);
}

/** Queue values of one sample: [queue index, backlog, latency] per queue. */
export type QueueTriples = number[];

export function encodeSample(tot: ArrayLike<number>, queues: QueueTriples, sets?: ArrayLike<number>): Uint8Array {
  const nq = queues.length / 3;
  const withSets = sets !== undefined && Array.from(sets).some((v) => !Number.isNaN(v));
  const buf = new ArrayBuffer(NT * 8 + (withSets ? SETS_BYTES : 0) + nq * 12);
  const view = new DataView(buf);
  for (let i = 0; i < NT; i++) view.setFloat64(i * 8, tot[i]!, true);
  let o = NT * 8;
  if (withSets) {
    view.setFloat64(o, NS, true);
    for (let i = 0; i < NS; i++) view.setFloat64(o + 8 + i * 8, sets![i]!, true);
    o += SETS_BYTES;
  }
  for (let i = 0; i < queues.length; i += 3) {
    view.setUint32(o, queues[i]!, true);
    view.setFloat32(o + 4, queues[i + 1]!, true);
    view.setFloat32(o + 8, queues[i + 2]!, true);
    o += 12;
  }
  return new Uint8Array(buf);
}

export function decodeSample(bytes: Uint8Array): { tot: Float64Array; queues: QueueTriples; sets: Float64Array } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const nt = bytes.byteLength % 12 === (NT_BEFORE_FAILED_SAMPLES * 8) % 12 ? NT_BEFORE_FAILED_SAMPLES : NT;
  const tot = new Float64Array(NT);
  for (let i = 0; i < nt; i++) tot[i] = view.getFloat64(i * 8, true);
  const sets = noSets();
  let start = nt * 8;
  if (bytes.byteLength % 12 === (NT * 8 + SETS_BYTES) % 12) {
    for (let i = 0; i < NS; i++) sets[i] = view.getFloat64(start + 8 + i * 8, true);
    start += SETS_BYTES;
  }
  const queues: QueueTriples = [];
  for (let o = start; o + 12 <= bytes.byteLength; o += 12) {
    queues.push(view.getUint32(o, true), view.getFloat32(o + 4, true), view.getFloat32(o + 8, true));
  }
  return { tot, queues, sets };
}
