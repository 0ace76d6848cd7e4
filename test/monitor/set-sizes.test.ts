// Sidekiq's Retries, Scheduled and Dead sizes in history: stored only for samples that have them,
// read back beside the older layouts, averaged into minutes and buckets like every gauge.
import { describe, expect, it } from 'vitest';
import { NS, NT, S, decodeSample, encodeSample, noSets } from '../../server/monitor/sample-codec.ts';
import { MinuteRollup } from '../../server/monitor/rollup.ts';
import { setsOf } from '../../server/monitor/set-sizes.ts';
import { metrics } from './support.ts';

const sets = (retry: number, scheduled: number, dead: number) => {
  const s = noSets();
  [s[S.retry], s[S.scheduled], s[S.dead]] = [retry, scheduled, dead];
  return s;
};

describe('set sizes in samples', () => {
  it('round-trips a sample with sizes; one without keeps its layout and reads NaN', () => {
    const tot = Float64Array.from({ length: NT }, (_, i) => i + 1);
    const withSets = decodeSample(encodeSample(tot, [4, 10, 0.5], sets(2, 1, 3)));
    expect(Array.from(withSets.tot)).toEqual(Array.from(tot));
    expect(withSets.queues).toEqual([4, 10, 0.5]);
    expect(Array.from(withSets.sets)).toEqual([2, 1, 3]);
    const plain = encodeSample(tot, [4, 10, 0.5], noSets());
    expect(plain.byteLength).toBe(NT * 8 + 12);
    const read = decodeSample(plain);
    expect(read.queues).toEqual([4, 10, 0.5]);
    expect(Array.from(read.sets).every(Number.isNaN)).toBe(true);
    expect(read.sets.length).toBe(NS);
  });

  it('takes the sizes from a sidekiq connection’s extras or the embedded connection’s sets only', () => {
    const m = metrics({ q: [1, 0] }, { processed: 0, failed: 0 });
    expect(Array.from(setsOf(m)).every(Number.isNaN)).toBe(true);
    const sk = { ...m, sidekiq: { retry_size: 5, scheduled_size: 0, dead_size: 9 } };
    expect(Array.from(setsOf(sk))).toEqual([5, 0, 9]);
    const embedded = { ...m, sets: { retry_size: 2, scheduled_size: 0, dead_size: 3 } };
    expect(Array.from(setsOf(embedded))).toEqual([2, 0, 3]);
  });

  it('averages a minute’s sizes over the samples that had them', () => {
    const r = new MinuteRollup();
    r.start(0);
    const tot = new Float64Array(NT);
    r.addGood(tot, [], sets(2, 0, 4));
    r.addGood(tot, [], sets(4, 0, 4));
    expect(Array.from(r.finish().sets)).toEqual([3, 0, 4]);
    r.start(60_000);
    r.addGood(tot, [], noSets());
    expect(Array.from(r.finish().sets).every(Number.isNaN)).toBe(true);
  });
});
