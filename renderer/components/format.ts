// Numbers and durations as people read them.
export function humanDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, seconds);
  if (s < 1) return s === 0 ? '0 s' : `${Math.round(s * 1000)} ms`;
  if (s < 60) return `${Math.round(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} m ${Math.round(s % 60)} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} m`;
  return `${Math.floor(s / 86400)} d ${Math.round((s % 86400) / 3600)} h`;
}

// Built once: toLocaleString('en-US') sets up an ICU number formatter on every call (1.4 % of the
// page's script time in a profile of the dashboard's first load). The same output.
const NUM = new Intl.NumberFormat('en-US');

export function num(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  return NUM.format(n);
}

export function rate(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  return `${n < 10 ? n.toFixed(2) : n.toFixed(1)}/s`;
}

// Intl.DateTimeFormat objects are built once: toLocaleTimeString() builds one per call, which
// showed up as most of a chart redraw in the profile.
const CLOCK_S = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const CLOCK_M = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit' });
const CLOCK_D = new Intl.DateTimeFormat('en-GB', { weekday: 'short', hour: '2-digit', minute: '2-digit' });

export function clock(t: number, spanMs: number): string {
  return (spanMs > 2 * 86400_000 ? CLOCK_D : spanMs <= 3600_000 ? CLOCK_S : CLOCK_M).format(t);
}

const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map((s) => s * 1000);

/** About `count` tick times on round clock steps between from and to (local time for day steps). */
export function timeTicks(from: number, to: number, count = 6): number[] {
  const span = Math.max(1, to - from);
  const step = STEPS.find((s) => span / s <= count) ?? 86400_000 * Math.ceil(span / count / 86400_000);
  const offset = step >= 3600_000 ? new Date(from).getTimezoneOffset() * 60_000 : 0;
  const out: number[] = [];
  for (let t = Math.ceil((from - offset) / step) * step + offset; t <= to; t += step) out.push(t);
  return out;
}

export function ago(iso: string | number | null | undefined, now = Date.now()): string {
  if (iso === null || iso === undefined) return 'never';
  const t = typeof iso === 'number' ? iso : Date.parse(iso);
  if (!Number.isFinite(t)) return 'never';
  return `${humanDuration((now - t) / 1000)} ago`;
}
