// `started_at` as GitLab's API printed it: ActiveSupport's Time#as_json, local time with three
// fractional digits and a numeric UTC offset, e.g. 2016-06-14T10:45:07.159-05:00.
const pad = (n: number, w = 2) => String(Math.trunc(Math.abs(n))).padStart(w, '0');

export function isoWithOffset(ms: number): string {
  const d = new Date(ms);
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` +
    `.${pad(d.getMilliseconds(), 3)}${sign}${pad(off / 60)}:${pad(off % 60)}`
  );
}

const bits = new DataView(new ArrayBuffer(8));

/**
 * Epoch ms of Sidekiq's `started_at` (epoch seconds, a float) as GitLab printed it: Time.at(float)
 * keeps the float's exact binary value and xmlschema(3) truncates it, so 1764094400.122 (just below
 * .122 in binary) prints .121. `seconds * 1000` rounds first and would print .122 for about half of
 * all whole-ms values, so the floor is taken on the exact value.
 */
export function msOfRubyTime(seconds: number): number {
  if (!(seconds > 0) || !Number.isFinite(seconds)) return Number.isFinite(seconds) ? Math.floor(seconds * 1000) : 0;
  bits.setFloat64(0, seconds);
  const word = bits.getBigUint64(0);
  const biased = Number(word >> 52n);
  const mantissa = (word & 0xfffffffffffffn) | (biased > 0 ? 1n << 52n : 0n);
  const exp = Math.max(biased, 1) - 1075; // seconds = mantissa * 2^exp exactly
  const ms = exp >= 0 ? (1000n * mantissa) << BigInt(exp) : (1000n * mantissa) >> BigInt(-exp);
  return Number(ms);
}
