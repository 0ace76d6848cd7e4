// Reading stored columns without trusting them. A row written by an older version, by hand or by a
// bug (an expiry past the year 275760, a number SQLite hands back as a BigInt, JSON cut short) must
// not make every later read of it throw: one bad row would otherwise turn every list that contains
// it into a 500, across restarts. Out-of-range values read as clamped, unreadable ones as null or a
// neutral default. Writes are validated elsewhere; this is the second line.

import type { Variable } from '../ports/build.ts';
import { asNumber, storedTime } from '../../util/times.ts';

/** A NOT NULL epoch-ms column: as storedTime, 0 when it holds no number. */
export const storedTimeOr0 = (v: unknown): number => storedTime(v) ?? 0;

/** An integer column (ids, sizes, seconds) as a safe integer within [min, max]; null when it holds no number. */
export function storedInt(v: unknown, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number | null {
  const n = asNumber(v);
  return n === undefined ? null : Math.min(Math.max(Math.trunc(n), min), max);
}

/** A JSON column, or `fallback` when it does not parse or `valid` refuses its shape. */
export function storedJson<T>(text: unknown, fallback: T, valid: (v: unknown) => v is T): T {
  if (typeof text !== 'string') return fallback;
  try {
    const v: unknown = JSON.parse(text);
    return valid(v) ? v : fallback;
  } catch {
    return fallback;
  }
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
export const isArray = (v: unknown): v is unknown[] => Array.isArray(v);
export const isId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;

/** What a stored variable must look like to be read (by every adapter of builds). */
export const isVariable = (v: unknown): v is Variable =>
  isPlainObject(v) && typeof v.key === 'string' && typeof v.value === 'string' && typeof v.public === 'boolean';

export const isString = (t: unknown): t is string => typeof t === 'string';
