// The chart's arithmetic, apart from React so it can be unit-tested: round axis maxima and ticks,
// and the SVG path of one series (a gap in the values starts a new subpath).
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

const r1 = (x: number) => Math.round(x * 10) / 10;

/** One SVG path for a series: M at the start of each run of values, L (or H/V for steps) after. */
export function seriesPath(t: number[], values: (number | null)[], kind: SeriesKind, x0: number, kx: number, from: number, y0: number, ky: number): string {
  const parts: string[] = [];
  const base = r1(y0);
  let open = false;
  let segStart = 0;
  let lastX = 0;
  for (let i = 0; i < t.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      if (open && kind === 'area') parts.push(`L${lastX},${base}L${segStart},${base}Z`);
      open = false;
      continue;
    }
    const x = Math.round((x0 + (t[i]! - from) * kx) * 10) / 10;
    const y = Math.round((y0 - v * ky) * 10) / 10;
    if (!open) {
      parts.push(kind === 'area' ? `M${x},${base}L${x},${y}` : `M${x},${y}`);
      segStart = x;
      open = true;
    } else parts.push(kind === 'step' ? `H${x}V${y}` : `L${x},${y}`);
    lastX = x;
  }
  if (open && kind === 'area') parts.push(`L${lastX},${base}L${segStart},${base}Z`);
  return parts.join('');
}
