// The y axis's tick choosers over many ranges: distinct labels, round steps, the range covered.
import { describe, expect, it } from 'vitest';
import { axisFor, bytesTick, durationTick, type AxisKind } from '../../renderer/components/ticks.ts';
import { decimal, rate } from '../../renderer/components/format.ts';

const ROUND_DURATIONS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
const isPow2 = (n: number) => Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;

// Maxima from 1 ms to 20 days (durations) or 1 B to 3 TiB (bytes) on a geometric sweep, plus edges.
function sweep(lo: number, hi: number): number[] {
  const out = [0, lo / 3, lo, hi];
  for (let v = lo; v < hi; v *= 1.137) out.push(v, Math.round(v));
  return out;
}

function checkAxis(kind: AxisKind, m: number, integers = false) {
  const a = axisFor(kind, m, integers);
  expect(a.ticks[0]).toBe(0);
  expect(a.ticks[a.ticks.length - 1]).toBe(a.max);
  expect(a.max).toBeGreaterThanOrEqual(m);
  expect(a.ticks.length).toBeGreaterThanOrEqual(2);
  expect(a.ticks.length).toBeLessThanOrEqual(6);
  const step = a.ticks[1]! - a.ticks[0]!;
  a.ticks.forEach((t, i) => expect(t).toBeCloseTo(i * step, 9));
  const labels = a.ticks.map(a.label);
  expect(new Set(labels).size).toBe(labels.length);
  return { a, step, labels };
}

describe('duration axis', () => {
  it('ticks at clock steps, distinct, covering the range, labels without "1 m 40 s"', () => {
    for (const m of sweep(0.001, 20 * 86400)) {
      const { step, labels } = checkAxis('duration', m);
      if (m <= 5 * 86400) expect(ROUND_DURATIONS).toContain(Number(step.toPrecision(6)));
      for (const l of labels) expect(l).not.toMatch(/\d+\.\d{3,}/);
    }
    expect(axisFor('duration', 200).ticks.map(durationTick)).toEqual(['0 s', '1 min', '2 min', '3 min', '4 min']);
    expect(axisFor('duration', 40).ticks.map(durationTick)).toEqual(['0 s', '10 s', '20 s', '30 s', '40 s']);
    expect(axisFor('duration', 1500).ticks.map(durationTick)).toEqual(['0 s', '5 min', '10 min', '15 min', '20 min', '25 min']);
    expect(axisFor('duration', 0.7).ticks.map(durationTick)).toEqual(['0 s', '200 ms', '400 ms', '600 ms', '800 ms']);
    expect(axisFor('duration', 0).ticks.map(durationTick)).toEqual(['0 s', '1 ms']);
  });
});

describe('byte axis', () => {
  it('ticks at whole binary steps, never "0 B, 1 B, 1 B"', () => {
    for (const m of sweep(1, 3 * 1024 ** 4)) {
      const { step } = checkAxis('bytes', m);
      expect(isPow2(step) || isPow2(step / 1024 ** 4)).toBe(true);
    }
    expect(axisFor('bytes', 2.5).ticks.map(bytesTick)).toEqual(['0 B', '1 B', '2 B', '3 B']);
    expect(axisFor('bytes', 3000).ticks.map(bytesTick)).toEqual(['0 B', '1 KiB', '2 KiB', '3 KiB']);
    expect(axisFor('bytes', 1.2 * 1024 ** 2).ticks.map(bytesTick)).toEqual(['0 B', '256 KiB', '512 KiB', '768 KiB', '1 MiB', '1.25 MiB']);
  });
});

describe('number axis', () => {
  it('round steps with the decimals that carry information', () => {
    for (const m of sweep(0.001, 1e9)) checkAxis('number', m);
    for (const m of sweep(0.001, 1e6)) {
      const { step } = checkAxis('number', m, true);
      expect(Number.isInteger(step)).toBe(true);
    }
    const { labels } = checkAxis('number', 3, true);
    expect(labels).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(checkAxis('number', 2.3).labels).toEqual(['0', '0.5', '1', '1.5', '2', '2.5']);
    expect(checkAxis('number', 0.004).labels).toEqual(['0', '0.001', '0.002', '0.003', '0.004', '0.005']);
  });
  it('decimal(): no "3.0"', () => {
    expect([3, 3.04, 0.25, 1234.5, -0].map((v) => decimal(v))).toEqual(['3', '3.04', '0.25', '1,234.5', '0']);
    expect(decimal(2.96, 1)).toBe('3');
    expect([3, 0.875, 17.64, 0].map(rate)).toEqual(['3/s', '0.88/s', '17.6/s', '0/s']);
  });
});
