// Times read from anywhere they may be out of range (a stored column, a remote answer): clamped into
// what a JavaScript Date holds and written as ISO 8601, never a throw (store/rows/row-values.ts says
// why a stored value is not trusted).

/** The largest epoch-ms a JavaScript Date holds (ECMA-262: ±8.64e15). */
export const MAX_DATE_MS = 8.64e15;

/** A number, or a BigInt as one; undefined for anything else (NaN too). */
export function asNumber(v: unknown): number | undefined {
  if (typeof v === 'bigint') return Number(v);
  return typeof v === 'number' && !Number.isNaN(v) ? v : undefined;
}

/** An epoch-ms column: clamped into Date's range; null when it holds no number. */
export function storedTime(v: unknown): number | null {
  const n = asNumber(v);
  return n === undefined ? null : Math.min(Math.max(n, -MAX_DATE_MS), MAX_DATE_MS);
}

/** Epoch ms as ISO 8601, or null; never throws, whatever the value. */
export function isoTime(v: unknown): string | null {
  const ms = storedTime(v);
  return ms === null ? null : new Date(ms).toISOString();
}

/** A NOT NULL time column as ISO 8601 (the epoch when it holds no number). */
export const isoTimeOr0 = (v: unknown): string => isoTime(v) ?? new Date(0).toISOString();
