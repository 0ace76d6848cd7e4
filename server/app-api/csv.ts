// History as CSV (RFC 4180): a header row, then one row per bucket. Queue names come from remote
// systems, so cells are quoted when needed and formula-looking names are defused for spreadsheets.
import type { History } from '../../contract/app.ts';

function cell(v: string | number | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return String(v);
  let s = v;
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function historyCsv(h: History): string {
  const queues = Object.keys(h.queues);
  const gapAt = new Map(h.gaps.map((g) => [g.t, g.error]));
  const head = [
    // ISO 8601 in UTC whatever zone the UI shows times in; the column's name says so.
    'time_utc',
    'processed',
    'failed',
    'enqueued',
    'busy',
    'concurrency',
    'processes',
    'processed_per_s',
    'failed_per_s',
    // Sidekiq's sets only where the history has them: other connections' files keep their columns.
    ...(h.sets ? ['retries', 'scheduled', 'dead'] : []),
    ...queues.flatMap((q) => [`backlog:${q}`, `latency_s:${q}`]),
    'error',
  ];
  const lines = [head.map(cell).join(',')];
  const tt = h.totals;
  for (let i = 0; i < h.t.length; i++) {
    const row: (string | number | null)[] = [
      new Date(h.t[i]!).toISOString(),
      tt.processed[i]!,
      tt.failed[i]!,
      tt.enqueued[i]!,
      tt.busy[i]!,
      tt.concurrency[i]!,
      tt.processes[i]!,
      tt.processed_rate[i]!,
      tt.failed_rate[i]!,
    ];
    if (h.sets) row.push(h.sets.retry[i]!, h.sets.scheduled[i]!, h.sets.dead[i]!);
    for (const q of queues) row.push(h.queues[q]!.backlog[i]!, h.queues[q]!.latency[i]!);
    row.push(gapAt.get(h.t[i]!) ?? null);
    lines.push(row.map(cell).join(','));
  }
  return lines.join('\r\n') + '\r\n';
}
