// The one date and time format: 24-hour, the zone named, local or UTC as chosen in Settings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Format = typeof import('../../renderer/components/format.ts');
let f: Format;
const savedTz = process.env.TZ;

beforeAll(async () => {
  // A zone with a half-hour offset and no daylight saving; the formatters read it when built. The
  // workers share module graphs (vitest's isolate: false): another file may have built them in the
  // machine's zone already, so this file imports its own copy (a query string is a new module).
  process.env.TZ = 'Asia/Kolkata';
  f = (await import(/* @vite-ignore */ `${new URL('../../renderer/components/format.ts', import.meta.url).href}?tz=kolkata`)) as Format;
});
afterAll(() => {
  f.setUtcTimes(false);
  process.env.TZ = savedTz;
});

const T = Date.UTC(2026, 10, 28, 3, 12, 8); // 03:12:08 UTC = 08:42:08 in Kolkata
const NOW = Date.UTC(2026, 11, 1);

describe('times in the local zone', () => {
  it('names the zone with its offset', () => {
    f.setUtcTimes(false);
    expect(f.timeOfDay(T)).toBe('08:42:08 UTC+5:30');
    expect(f.dateTime(T, NOW)).toBe('28 Nov, 08:42:08 UTC+5:30');
    expect(f.dateTime(new Date(T).toISOString(), Date.UTC(2027, 0, 2))).toBe('28 Nov 2026, 08:42:08 UTC+5:30');
    expect(f.zoneName(T)).toBe('UTC+5:30');
  });
});

describe('times in UTC', () => {
  it('switches every formatter, axis labels and ticks included', () => {
    f.setUtcTimes(true);
    expect(f.timeOfDay(T)).toBe('03:12:08 UTC');
    expect(f.dateTime(T, NOW)).toBe('28 Nov, 03:12:08 UTC');
    expect(f.clock(T, 3600_000)).toBe('03:12:08');
    expect(f.clock(T, 3 * 86400_000)).toBe('Sat 03:12');
    // Hour ticks fall on the hour of the zone shown.
    const ticks = f.timeTicks(T, T + 12 * 3600_000);
    expect(ticks.every((t) => t % 3600_000 === 0)).toBe(true);
    f.setUtcTimes(false);
    expect(f.timeTicks(T, T + 12 * 3600_000).every((t) => (t + 1800_000) % 3600_000 === 0)).toBe(true);
  });
  it('says "—" for no time', () => {
    expect([f.timeOfDay(null), f.dateTime(undefined), f.dateTime('not a time')]).toEqual(['—', '—', '—']);
  });
});
