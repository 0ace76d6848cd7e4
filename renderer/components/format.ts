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

export function num(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  return n.toLocaleString('en-US');
}

export function rate(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  return `${n < 10 ? n.toFixed(2) : n.toFixed(1)}/s`;
}

export function clock(t: number, spanMs: number): string {
  const d = new Date(t);
  if (spanMs > 2 * 86400_000) return d.toLocaleString('en-GB', { weekday: 'short', hour: '2-digit', minute: '2-digit' });
  return d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', ...(spanMs <= 3600_000 ? { second: '2-digit' } : {}) });
}

export function ago(iso: string | number | null | undefined, now = Date.now()): string {
  if (iso === null || iso === undefined) return 'never';
  const t = typeof iso === 'number' ? iso : Date.parse(iso);
  if (!Number.isFinite(t)) return 'never';
  return `${humanDuration((now - t) / 1000)} ago`;
}
