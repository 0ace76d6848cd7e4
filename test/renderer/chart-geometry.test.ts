// The dashboard's pure helpers: axis arithmetic, durations and time ticks (drawing: chart-canvas.test.ts).
import { describe, expect, it } from 'vitest';
import { niceCeil, yTicks } from '../../renderer/components/chart-geometry.ts';
import { humanDuration, timeTicks } from '../../renderer/components/format.ts';

describe('axis arithmetic', () => {
  it('rounds a maximum up to 1, 2, 2.5 or 5 × 10^k', () => {
    expect([0, 0.3, 1, 3, 7, 11, 240, 251, 999, 1001].map(niceCeil)).toEqual([1, 0.5, 1, 5, 10, 20, 250, 500, 1000, 2000]);
  });
  it('splits 0..max into 4 or 5 round steps', () => {
    expect(yTicks(500)).toEqual([0, 100, 200, 300, 400, 500]);
    expect(yTicks(200)).toEqual([0, 50, 100, 150, 200]);
    expect(yTicks(2.5)).toEqual([0, 0.5, 1, 1.5, 2, 2.5]);
  });
});

describe('format', () => {
  it('humanizes durations', () => {
    expect([0, 0.25, 42, 125, 7260, 90000, null].map(humanDuration)).toEqual(['0 s', '250 ms', '42 s', '2 m 5 s', '2 h 1 m', '1 d 1 h', '—']);
  });
  it('places time ticks on round steps inside the range', () => {
    const from = Date.UTC(2026, 0, 1, 10, 0, 7);
    const ticks = timeTicks(from, from + 15 * 60_000);
    expect(ticks.length).toBeGreaterThanOrEqual(3);
    expect(ticks.length).toBeLessThanOrEqual(6);
    expect(ticks.every((x) => x >= from && x <= from + 15 * 60_000)).toBe(true);
    const step = ticks[1]! - ticks[0]!;
    expect(ticks[0]! % step).toBe(0);
  });
});
