// The server log (<data dir>/logs/jobscope.log), newest first, filtered by level.
import { useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { settings } from '../../api/settings.ts';
import { usePace } from '../../app/pace.tsx';
import { dateTime } from '../../components/format.ts';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

export function LogViewer() {
  const client = useClient();
  const [level, setLevel] = useState<(typeof LEVELS)[number]>('info');
  const [lines, setLines] = useState(200);
  const [follow, setFollow] = useState(false);
  const pace = usePace(3000);
  const q = useQuery({
    queryKey: ['logs', level, lines],
    queryFn: () => settings.logs(client, { level, lines }),
    refetchInterval: follow ? pace : false,
    placeholderData: keepPreviousData,
  });
  const rows = [...(q.data?.lines ?? [])].reverse();
  return (
    <div className="card" data-testid="log-viewer">
      <div className="card-head">
        <h3>Server log</h3>
        <span className="muted small"><code>{q.data?.file ?? ''}</code></span>
      </div>
      <div className="toolbar small">
        <label className="inline">Level at least
          <select value={level} onChange={(e) => setLevel(e.target.value as typeof level)} data-testid="log-level">
            {LEVELS.map((l) => <option key={l}>{l}</option>)}
          </select>
        </label>
        <label className="inline">Last
          <select value={lines} onChange={(e) => setLines(Number(e.target.value))}>
            {[100, 200, 1000, 5000].map((n) => <option key={n} value={n}>{n} lines</option>)}
          </select>
        </label>
        <label className="check"><input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> follow</label>
        <button className="ghost" onClick={() => void q.refetch()} disabled={q.isFetching} data-testid="log-refresh">Refresh</button>
      </div>
      {q.error && <p className="error">{(q.error as Error).message}</p>}
      {/* A box that scrolls on its own: focusable so the keyboard can scroll it too. */}
      <div className="table-wrap log-table" tabIndex={0} role="region" aria-label="Server log lines">
        <table data-testid="log-table">
          <thead><tr><th>Time</th><th>Level</th><th>Message</th><th>Fields</th></tr></thead>
          <tbody>
            {rows.map((l, i) => (
              <tr key={`${l.time}-${i}`} data-testid="log-row" data-level={l.level}>
                <td className="small">{dateTime(l.time)}</td>
                <td><span className={`badge log-${l.level}`}>{l.level}</span></td>
                <td className="wrap">{l.msg}</td>
                <td className="wrap small"><code>{Object.keys(l.fields).length ? JSON.stringify(l.fields) : ''}</code></td>
              </tr>
            ))}
            {q.data && !rows.length && <tr><td colSpan={4} className="muted">No lines at this level.</td></tr>}
          </tbody>
        </table>
      </div>
    </div>
  );
}
