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
