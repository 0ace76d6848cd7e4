import { useSyncExternalStore } from 'react';

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
  return `${decimal(n, n < 10 ? 2 : 1)}/s`;
}

// Built once per precision, like NUM above.
const DECIMALS = new Map<number, Intl.NumberFormat>();

/** A number with the decimals it needs, at most `digits` (0.25 → "0.25", 3 → "3", 1.5 → "1.5"). */
export function decimal(v: number, digits = 2): string {
  if (!Number.isFinite(v)) return '—';
  let f = DECIMALS.get(digits);
  if (!f) DECIMALS.set(digits, (f = new Intl.NumberFormat('en-US', { maximumFractionDigits: digits })));
  return f.format(Object.is(v, -0) ? 0 : v);
}

// One date and time format for every view: 24-hour "03:12:08", "28 Nov, 03:12:08" (the year only
// when it is not this one), always with the zone it is in ("UTC+1", or "UTC" when the user chose
// UTC in Settings). Chart axes drop the zone: the hover readout under them names it.
// Intl.DateTimeFormat objects are built once: toLocaleTimeString() builds one per call, which
// showed up as most of a chart redraw in the profile.
let utc = false;
const zoneListeners = new Set<() => void>();

/** The Settings choice, set by the shell while it renders (before any view formats a time). */
export function setUtcTimes(on: boolean): void {
  utc = on;
}

/** Tells memoized components (charts) that the zone changed; the shell calls it after a change. */
export function announceTimeZone(): void {
  for (const l of zoneListeners) l();
}

/** Whether times show in UTC; a component that memoizes formatted times re-renders on a change. */
export function useUtcTimes(): boolean {
  return useSyncExternalStore(
    (l) => {
      zoneListeners.add(l);
      return () => zoneListeners.delete(l);
    },
    () => utc,
  );
}

type Formats = { local: Intl.DateTimeFormat; utc: Intl.DateTimeFormat };
const formats = (o: Intl.DateTimeFormatOptions): Formats => ({
  local: new Intl.DateTimeFormat('en-GB', { hourCycle: 'h23', ...o }),
  utc: new Intl.DateTimeFormat('en-GB', { hourCycle: 'h23', ...o, timeZone: 'UTC' }),
});
const HMS = formats({ hour: '2-digit', minute: '2-digit', second: '2-digit' });
const HM = formats({ hour: '2-digit', minute: '2-digit' });
const WEEKDAY_HM = formats({ weekday: 'short', hour: '2-digit', minute: '2-digit' });
const DAY = formats({ day: '2-digit', month: 'short' });
const DAY_YEAR = formats({ day: '2-digit', month: 'short', year: 'numeric' });
const YEAR = formats({ year: 'numeric' });
const inZone = (f: Formats, t: number) => (utc ? f.utc : f.local).format(t);

function epoch(t: number | string | Date | null | undefined): number {
  if (t === null || t === undefined) return NaN;
  return typeof t === 'number' ? t : typeof t === 'string' ? Date.parse(t) : t.getTime();
}

/** The zone times are shown in at time t: "UTC", "UTC+1", "UTC-3:30" (the offset of that day). */
export function zoneName(t: number = Date.now()): string {
  const off = utc ? 0 : -new Date(t).getTimezoneOffset();
  if (off === 0) return 'UTC';
  const a = Math.abs(off);
  return `UTC${off > 0 ? '+' : '-'}${Math.floor(a / 60)}${a % 60 ? `:${String(a % 60).padStart(2, '0')}` : ''}`;
}

/** "03:12:08 UTC+1": a time of today (a last sample, a log line of this session). */
export function timeOfDay(t: number | string | Date | null | undefined): string {
  const ms = epoch(t);
  return Number.isFinite(ms) ? `${inZone(HMS, ms)} ${zoneName(ms)}` : '—';
}

/** "28 Nov, 03:12:08 UTC+1", with the year when it is not this one: a time in a list or a detail. */
export function dateTime(t: number | string | Date | null | undefined, now: number = Date.now()): string {
  const ms = epoch(t);
  if (!Number.isFinite(ms)) return '—';
  const day = inZone(YEAR, ms) === inZone(YEAR, now) ? inZone(DAY, ms) : inZone(DAY_YEAR, ms);
  return `${day}, ${inZone(HMS, ms)} ${zoneName(ms)}`;
}

/** An axis label: seconds over an hour or less, the weekday over more than two days; no zone. */
export function clock(t: number, spanMs: number): string {
  return inZone(spanMs > 2 * 86400_000 ? WEEKDAY_HM : spanMs <= 3600_000 ? HMS : HM, t);
}

const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map((s) => s * 1000);

/** About `count` tick times on round clock steps between from and to (hour and day steps on the
 *  shown zone's clock). */
export function timeTicks(from: number, to: number, count = 6): number[] {
  const span = Math.max(1, to - from);
  const step = STEPS.find((s) => span / s <= count) ?? 86400_000 * Math.ceil(span / count / 86400_000);
  const offset = step >= 3600_000 && !utc ? new Date(from).getTimezoneOffset() * 60_000 : 0;
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
