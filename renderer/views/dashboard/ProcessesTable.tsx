// Worker processes of the latest sample. A process seen earlier in this session but absent now is
// kept on the list, flagged "gone": a worker that vanished is exactly what an operator must notice.
import { useRef } from 'react';
import type { CurrentSample } from '../../api/client.ts';
import { Glossary } from '../../components/glossary.tsx';
import { humanDuration } from '../../components/format.ts';

type Proc = CurrentSample['processes'][number];
const keyOf = (p: Proc) => `${p.hostname}\u0000${p.pid}\u0000${p.tag}`;

export function ProcessesTable({ connectionId, current }: { connectionId: string; current: CurrentSample | null | undefined }) {
  const seen = useRef(new Map<string, Map<string, Proc>>());
  let known = seen.current.get(connectionId);
  if (!known) seen.current.set(connectionId, (known = new Map()));
  const live = new Set<string>();
  for (const p of current?.processes ?? []) {
    live.add(keyOf(p));
    known.set(keyOf(p), p);
  }
  const rows = [...known.entries()].map(([k, p]) => ({ p, gone: !live.has(k) }));
  rows.sort((a, b) => Number(a.gone) - Number(b.gone) || a.p.hostname.localeCompare(b.p.hostname) || a.p.pid - b.p.pid);
  const now = Date.now();

  return (
    <section className="card" aria-labelledby="procs-h">
      <div className="card-head">
        <h3 id="procs-h"><Glossary term="processes">Processes</Glossary> <span className="muted small">{current?.processes.length ?? 0} live</span></h3>
      </div>
      <div className="table-wrap">
        <table data-testid="processes-table">
          <thead>
            <tr>
              <th>Hostname</th><th>PID</th><th>Tag</th><th>Uptime</th><th>Queues</th><th>Labels</th>
              <th><Glossary term="busy">Busy</Glossary> / <Glossary term="concurrency">concurrency</Glossary></th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ p, gone }) => {
              const pct = p.concurrency ? Math.min(100, (p.busy / p.concurrency) * 100) : 0;
              return (
                <tr key={keyOf(p)} className={gone ? 'gone' : ''} data-testid={gone ? 'process-gone' : 'process-row'}>
                  <td>{p.hostname} {gone && <span className="badge danger" title="Seen earlier in this session, missing from the latest sample">gone</span>}</td>
                  <td>{p.pid}</td>
                  <td>{p.tag}</td>
                  <td>{gone ? '—' : humanDuration((now - Date.parse(p.started_at)) / 1000)}</td>
                  <td className="wrap" title={p.queues.join(', ')}>{p.queues.slice(0, 3).join(', ')}{p.queues.length > 3 && <span className="muted"> +{p.queues.length - 3} more</span>}</td>
                  <td>{p.labels.map((l) => <span key={l} className="badge">{l}</span>)}</td>
                  <td>
                    <div className="bar" role="meter" aria-valuemin={0} aria-valuemax={p.concurrency} aria-valuenow={p.busy} aria-label={`${p.busy} of ${p.concurrency} busy`}>
                      <div className="bar-fill" style={{ width: `${pct}%` }} />
                      <span className="bar-text">{p.busy} / {p.concurrency}</span>
                    </div>
                  </td>
                </tr>
              );
            })}
            {!rows.length && <tr><td colSpan={7} className="muted">No worker processes reported.</td></tr>}
          </tbody>
        </table>
      </div>
    </section>
  );
}
