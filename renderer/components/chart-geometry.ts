// The chart's axis arithmetic, apart from React so it can be unit-tested: round maxima and ticks.
// (The series themselves are drawn by chart-canvas.ts.)
export type SeriesKind = 'line' | 'area' | 'step' | undefined;

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
