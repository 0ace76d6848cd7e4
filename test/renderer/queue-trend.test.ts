// A queue's backlog trend: a least-squares slope over the last five minutes of samples, said as
// growing, draining with a time to empty, or unknown with fewer than three samples.
import { describe, expect, it } from 'vitest';
import { backlogTrend, slopePerMinute, trendText } from '../../renderer/components/queue-trend.ts';

const MIN = 60_000;

describe('slopePerMinute', () => {
  it('fits a straight line exactly, in jobs a minute', () => {
    const t = [0, 1, 2, 3, 4].map((m) => 1e12 + m * MIN);
    expect(slopePerMinute(t, [10, 22, 34, 46, 58])).toBeCloseTo(12, 9);
    expect(slopePerMinute(t, [50, 40, 30, 20, 10])).toBeCloseTo(-10, 9);
  });

  it('is a least-squares fit: one odd sample moves it, not flips it', () => {
    const t = [0, 1, 2, 3, 4].map((m) => m * MIN);
    expect(slopePerMinute(t, [100, 90, 95, 70, 60])).toBeCloseTo(-10, 9);
  });

  it('uses only the last five minutes before the latest sample, and skips gaps', () => {
    const t = [0, 10, 11, 12, 13].map((m) => m * MIN);
    // The sample ten minutes back is outside the window: the slope is the last four's.
    expect(slopePerMinute(t, [1000, 0, 5, 10, 15])).toBeCloseTo(5, 9);
    expect(slopePerMinute([0, MIN, 2 * MIN, 3 * MIN], [0, null, 2, 3])).toBeCloseTo(1, 9);
  });

  it('is unknown with fewer than three samples in the window', () => {
    expect(slopePerMinute([], [])).toBeNull();
    expect(slopePerMinute([0, MIN], [1, 2])).toBeNull();
    expect(slopePerMinute([0, MIN, 2 * MIN], [1, null, 3])).toBeNull();
    expect(slopePerMinute([0, 9 * MIN, 10 * MIN], [1, 2, 3])).toBeNull();
  });
});

describe('trendText', () => {
  it('says growing, draining with the minutes to empty, steady, empty or unknown', () => {
    expect(trendText(backlogTrend(12, 40))).toBe('growing by 12/min');
    expect(trendText(backlogTrend(-10, 45))).toBe('draining 10/min, empty in ~5 min');
    expect(trendText(backlogTrend(-2.5, 1))).toBe('draining 2.5/min, empty in ~1 min');
    expect(trendText(backlogTrend(0.1, 40))).toBe('steady');
    expect(trendText(backlogTrend(0, 0))).toBe('empty');
    expect(trendText(backlogTrend(-3, 0))).toBe('empty');
    expect(trendText(backlogTrend(null, 40))).toBe('trend unknown (fewer than 3 samples in 5 min)');
  });
});
