// The chart's axis arithmetic, apart from React so it can be unit-tested: where the plot sits in
// the chart, round maxima and ticks, which sample the hover readout shows, where a stretch of time
// (a pause) sits on the plot. (The series themselves are drawn by chart-canvas.ts.) The early
// entry draws the dashboard's first chart with these before React has loaded (early-chart.ts).
export type SeriesKind = 'line' | 'area' | 'step' | undefined;

export interface Plot {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Space around the plot, CSS pixels (recharts' margin 8/16/0/0, a 56 px y axis, a 30 px x axis). */
const MARGIN_TOP = 8;
const MARGIN_RIGHT = 16;
const Y_AXIS_WIDTH = 56;
const X_AXIS_HEIGHT = 30;

/** A chart's height in CSS pixels when its caller names none. */
export const CHART_HEIGHT = 220;

export function plotArea(width: number, height: number): Plot | null {
  const p = { x: Y_AXIS_WIDTH, y: MARGIN_TOP, width: width - Y_AXIS_WIDTH - MARGIN_RIGHT, height: height - MARGIN_TOP - X_AXIS_HEIGHT };
  return p.width > 0 && p.height > 0 ? p : null;
}

/** What the y axis must reach: the highest value of the shown series or threshold line, 5 % above
 *  it so a line at the top does not run along the frame. */
export function axisReach(series: readonly { values: readonly (number | null)[] }[], hidden: ReadonlySet<number>, refLines: readonly { y: number }[]): number {
  let m = 0;
  series.forEach((s, i) => {
    if (hidden.has(i)) return;
    for (const v of s.values) if (v !== null && v > m) m = v;
  });
  for (const r of refLines) if (r.y > m) m = r.y;
  return m * 1.05;
}

/** At most this many steps on a y axis. */
export const MAX_STEPS = 5;

/** The y axis's top for plain numbers up to dataMax; `integers` (counts): at least 0–MAX_STEPS, so
 *  it never ticks at 0.2 jobs. */
export function numberAxisMax(dataMax: number, integers: boolean): number {
  return niceCeil(Math.max(dataMax, integers ? MAX_STEPS : 0));
}

/** 1, 2, 2.5 or 5 × 10^k at or above v, so the y axis ends on a round number. */
export function niceCeil(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** 4 or 5 equal steps from 0 to a niceCeil() maximum, each step itself round (1, 2 or 5 × 10^k). */
export function yTicks(max: number): number[] {
  const isNice = (x: number) => {
    const m = x / 10 ** Math.floor(Math.log10(x) + 1e-9);
    return [1, 2, 5].some((n) => Math.abs(m - n) < 1e-6);
  };
  const n = isNice(max / 5) ? 5 : 4;
  return Array.from({ length: n + 1 }, (_, i) => Math.round(((max * i) / n) * 1e6) / 1e6);
}

/** Index of the sample time nearest x (t ascending, not empty). */
export function nearestIndex(t: readonly number[], x: number): number {
  let lo = 0;
  let hi = t.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (t[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && Math.abs(t[lo - 1]! - x) < Math.abs(t[lo]! - x)) lo--;
  return lo;
}

/** The sample the hover readout shows for time x: the nearest one, if it is within `reachMs` of x
 *  or within the spacing to its own nearest neighbour (so the readout follows the cursor along the
 *  samples); otherwise -1. The chart spans the whole range, and a cursor over a stretch without
 *  samples (before the history starts, a long gap) must not read a sample from minutes away. */
export function hoverIndex(t: readonly number[], x: number, reachMs: number): number {
  if (!t.length) return -1;
  const i = nearestIndex(t, x);
  const prev = i > 0 ? t[i]! - t[i - 1]! : Infinity;
  const next = i < t.length - 1 ? t[i + 1]! - t[i]! : Infinity;
  const spacing = Math.min(prev, next);
  return Math.abs(t[i]! - x) <= Math.max(reachMs, Number.isFinite(spacing) ? spacing : 0) ? i : -1;
}

/** Left offset and width in pixels of the stretch from..to (to null: up to the chart's end) on a
 *  plot `width` px wide showing chartFrom..chartTo; clipped to the plot, null when outside it. */
export function spanBox(from: number, to: number | null, chartFrom: number, chartTo: number, width: number): { left: number; width: number } | null {
  if (!(chartTo > chartFrom) || !(width > 0)) return null;
  const end = to ?? chartTo;
  if (end < chartFrom || from > chartTo) return null;
  const k = width / (chartTo - chartFrom);
  const l = (Math.max(from, chartFrom) - chartFrom) * k;
  const r = (Math.min(end, chartTo) - chartFrom) * k;
  return { left: l, width: Math.max(0, r - l) };
}
