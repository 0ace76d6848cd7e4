// `expire_in` as GitLab read it (ChronicDuration): "1 week", "7d", "2 hrs 30 min", "3600".
// Written by hand because it is a dozen lines and the one npm port is unmaintained.
// Returns seconds, or undefined when the text is not a duration (GitLab then sets no expiry).
const UNITS: [RegExp, number][] = [
  [/^(s|sec|secs|second|seconds)$/, 1],
  [/^(m|min|mins|minute|minutes)$/, 60],
  [/^(h|hr|hrs|hour|hours)$/, 3600],
  [/^(d|day|days)$/, 86400],
  [/^(w|wk|wks|week|weeks)$/, 604800],
  [/^(mo|mos|month|months)$/, 2592000],
  [/^(y|yr|yrs|year|years)$/, 31557600],
];

export function parseExpireIn(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const s = text.trim().toLowerCase().replace(/,|\band\b/g, ' ');
  if (s === '' || s.length > 100) return undefined;
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s);
  let total = 0;
  let matched = false;
  const re = /(\d+(?:\.\d+)?)\s*([a-z]+)/g;
  let rest = s;
  for (const m of s.matchAll(re)) {
    const unit = UNITS.find(([r]) => r.test(m[2]!));
    if (!unit) return undefined;
    total += Number(m[1]) * unit[1];
    matched = true;
    rest = rest.replace(m[0], '');
  }
  if (!matched || rest.trim() !== '') return undefined;
  return total;
}

/** The hard ceiling of --max-artifact-expire-days: 100 years keeps every expiry far inside Date's range. */
export const EXPIRE_DAYS_CEILING = 36525;

/**
 * When artifacts uploaded at `now` with `expire_in` seconds expire (epoch ms), or null for never.
 * Longer than `maxDays` is cut to it, as GitLab caps artifact expiry: a stored expiry must stay a
 * time every reader can format (99 nines of seconds is past the year 275760, where Date ends).
 */
export function artifactsExpireAt(now: number, expireIn: number | undefined, maxDays: number): number | null {
  if (expireIn === undefined || !Number.isFinite(expireIn) || expireIn < 0) return null;
  const capMs = Math.min(Math.max(maxDays, 0), EXPIRE_DAYS_CEILING) * 86_400_000;
  return Math.round(now + Math.min(expireIn * 1000, capMs));
}
