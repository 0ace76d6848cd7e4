// A queue's backlog trend as an on-call engineer works it out in their head: growing by N a
// minute, or draining and at this pace empty in about M minutes. The slope is a least-squares fit
// over the last minutes of samples, so one odd sample does not flip the answer; with too few
// samples the trend is said to be unknown rather than guessed.

export const TREND_WINDOW_MS = 5 * 60_000;
export const TREND_MIN_SAMPLES = 3;

/** Least-squares slope of `values` over `t` (ms), per minute, from the samples of the window ending at the last one; null below the minimum. */
export function slopePerMinute(t: readonly number[], values: readonly (number | null)[], windowMs = TREND_WINDOW_MS, minSamples = TREND_MIN_SAMPLES): number | null {
  let last = -Infinity;
  for (let i = 0; i < t.length; i++) if (values[i] !== null && values[i] !== undefined) last = Math.max(last, t[i]!);
  if (!Number.isFinite(last)) return null;
  let n = 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < t.length; i++) {
    const y = values[i];
    if (y === null || y === undefined || t[i]! < last - windowMs) continue;
    // Minutes before the last sample: small numbers, so the sums stay exact.
    const x = (t[i]! - last) / 60_000;
    n++;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const d = n * sxx - sx * sx;
  if (n < minSamples || d <= 0) return null;
  return (n * sxy - sx * sy) / d;
}

export type Trend =
  | { kind: 'unknown' }
  | { kind: 'steady' | 'empty' }
  | { kind: 'growing'; perMin: number }
  | { kind: 'draining'; perMin: number; emptyInMin: number };

/** Below this many jobs a minute either way the backlog counts as steady. */
const STEADY = 0.5;

export function backlogTrend(slope: number | null, backlog: number): Trend {
  if (slope === null) return { kind: 'unknown' };
  if (Math.abs(slope) < STEADY) return { kind: backlog === 0 ? 'empty' : 'steady' };
  if (slope > 0) return { kind: 'growing', perMin: slope };
  if (backlog === 0) return { kind: 'empty' };
  return { kind: 'draining', perMin: -slope, emptyInMin: Math.max(1, Math.ceil(backlog / -slope)) };
}

const perMin = (v: number) => `${v >= 10 ? Math.round(v) : Math.round(v * 10) / 10}/min`;

export function trendText(tr: Trend): string {
  switch (tr.kind) {
    case 'unknown':
      return `trend unknown (fewer than ${TREND_MIN_SAMPLES} samples in ${TREND_WINDOW_MS / 60_000} min)`;
    case 'empty':
      return 'empty';
    case 'steady':
      return 'steady';
    case 'growing':
      return `growing by ${perMin(tr.perMin)}`;
    case 'draining':
      return `draining ${perMin(tr.perMin)}, empty in ~${tr.emptyInMin} min`;
  }
}
