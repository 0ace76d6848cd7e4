// The name a history CSV is saved under, the same from the server's Content-Disposition and the
// UI's save dialog: the connection's name (which users choose, so it is reduced to characters every
// file system and header accepts) and the range's start in UTC.

/** "Prod Köln / EU #2" → "Prod-Koln-EU-2": ASCII letters, digits, dot, dash and underscore only. */
export function fileNamePart(name: string, maxLength = 60): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, maxLength)
    .replace(/[-.]+$/, '');
}

/** jobscope-<name>-<YYYYMMDD-HHMM>Z.csv; a name with nothing usable falls back to `fallback` (the id). */
export function historyCsvName(connectionName: string, fallback: string, fromMs: number): string {
  const d = new Date(fromMs);
  const two = (n: number) => String(n).padStart(2, '0');
  const stamp = `${d.getUTCFullYear()}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}-${two(d.getUTCHours())}${two(d.getUTCMinutes())}`;
  return `jobscope-${fileNamePart(connectionName) || fileNamePart(fallback) || 'connection'}-${stamp}Z.csv`;
}
