// The dashboard's pure helpers: axis arithmetic, durations and time ticks (drawing: chart-canvas.test.ts).
import { describe, expect, it } from 'vitest';
import { hoverIndex, nearestIndex, niceCeil, spanBox, yTicks } from '../../renderer/components/chart-geometry.ts';
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

describe('time on the x axis', () => {
  it('nearestIndex: the sample nearest a time', () => {
    const t = [0, 10, 20, 30];
    expect([-5, 4, 6, 14, 16, 29, 99].map((x) => nearestIndex(t, x))).toEqual([0, 0, 1, 1, 2, 3, 3]);
  });

  it('hoverIndex: a sample within reach or its own spacing, none across an empty stretch', () => {
    // A history that starts 600 s into the range, sampled every 5 s, with a 100 s gap.
    const t = [600, 605, 610, 710, 715];
    expect(hoverIndex(t, 606, 1)).toBe(1); // on the samples: follows them
    expect(hoverIndex(t, 612, 1)).toBe(2); // within its spacing of 5
    expect(hoverIndex(t, 300, 1)).toBe(-1); // before the history starts
    expect(hoverIndex(t, 660, 1)).toBe(-1); // in the middle of the gap
    expect(hoverIndex(t, 300, 400)).toBe(0); // reach in ms (a few pixels of a long range)
    expect(hoverIndex([500], 505, 1)).toBe(-1); // a lone sample: reach only
    expect(hoverIndex([500], 505, 10)).toBe(0);
    expect(hoverIndex([], 5, 10)).toBe(-1);
  });

  it('spanBox: a stretch of time as pixels, clipped to the plot', () => {
    expect(spanBox(250, 500, 0, 1000, 200)).toEqual({ left: 50, width: 50 });
    expect(spanBox(-100, 100, 0, 1000, 200)).toEqual({ left: 0, width: 20 });
    expect(spanBox(900, null, 0, 1000, 200)).toEqual({ left: 180, width: 20 }); // open: to the end
    expect(spanBox(1000, null, 0, 1000, 200)).toEqual({ left: 200, width: 0 }); // paused now: a line at the end
    expect(spanBox(1100, 1200, 0, 1000, 200)).toBeNull();
    expect(spanBox(-300, -200, 0, 1000, 200)).toBeNull();
  });
});
