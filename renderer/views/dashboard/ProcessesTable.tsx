// Worker processes of the latest sample. A process seen earlier in this session but absent now is
// kept on the list, flagged "gone": a worker that vanished is exactly what an operator must notice.
import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { ConnectionView, CurrentSample } from '../../api/client.ts';
import { ProcessActions } from './ProcessActions.tsx';
import { Glossary } from '../../components/glossary.tsx';
import { humanDuration } from '../../components/format.ts';

type Proc = CurrentSample['processes'][number];

/** A quiet process takes no new work: its threads are no spare capacity (left out of utilization). */
export function QuietBadge({ stopping }: { stopping: boolean }) {
  const title = stopping ? 'Stopping: finishing its jobs before it exits, fetching no new ones' : 'Quiet: fetches no new jobs (TSTP); its threads are not counted as capacity';
  return <span className="badge warn" data-testid="process-quiet" title={title}>{stopping ? 'stopping' : 'quiet'}</span>;
}
const keyOf = (p: Proc) => `${p.hostname}\u0000${p.pid}\u0000${p.tag}`;

type Known = ReadonlyMap<string, ReadonlyMap<string, Proc>>; // connection → process key → last seen

function remember(known: Known, connectionId: string, current: CurrentSample | null | undefined): Known {
  const procs = new Map(known.get(connectionId));
  for (const p of current?.processes ?? []) procs.set(keyOf(p), p);
  return new Map(known).set(connectionId, procs);
}

/** asOf: when `current` was fetched (uptimes are counted to then, as render may not read the clock). */
/** conn: the connection shown; a sidekiq one that allows changes offers quiet and stop per process. */
export function ProcessesTable({ connectionId, current, asOf, conn }: { connectionId: string; current: CurrentSample | null | undefined; asOf: number; conn?: ConnectionView }) {
  const qc = useQueryClient();
  const acts = conn?.kind === 'sidekiq' && conn.allow_changes ? conn : undefined;
  // What this session has seen, folded in while rendering whenever a new sample (or connection)
  // comes in: React's pattern for state that accumulates props, with no extra effect pass.
  const [memory, setMemory] = useState(() => ({ current, connectionId, known: remember(new Map(), connectionId, current) }));
  let known = memory.known;
  if (memory.current !== current || memory.connectionId !== connectionId) {
    known = remember(known, connectionId, current);
    setMemory({ current, connectionId, known });
  }
  const procs = known.get(connectionId) ?? new Map<string, Proc>();
  const live = new Set((current?.processes ?? []).map(keyOf));
  const details = new Map((current?.processes ?? []).map((p, i) => [keyOf(p), current?.sidekiq?.process_details[i]]));
  const rows = [...procs.entries()].map(([k, p]) => ({ p, gone: !live.has(k), detail: details.get(k) }));
  rows.sort((a, b) => Number(a.gone) - Number(b.gone) || a.p.hostname.localeCompare(b.p.hostname) || a.p.pid - b.p.pid);
  const now = asOf || Date.parse(current?.at ?? '') || 0;

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
              {acts && <th>Actions</th>}
            </tr>
          </thead>
          <tbody>
            {rows.map(({ p, gone, detail }) => {
              const pct = p.concurrency ? Math.min(100, (p.busy / p.concurrency) * 100) : 0;
              return (
                <tr key={keyOf(p)} className={gone ? 'gone' : ''} data-testid={gone ? 'process-gone' : 'process-row'}>
                  <td>
                    {p.hostname} {gone && <span className="badge danger" title="Seen earlier in this session, missing from the latest sample">gone</span>}
                    {detail?.quiet && <QuietBadge stopping={detail.stopping === true} />}
                  </td>
                  <td>{p.pid}</td>
                  <td>{p.tag}</td>
                  <td>{gone ? '—' : humanDuration((now - Date.parse(p.started_at)) / 1000)}</td>
                  <td className="wrap" title={p.queues.join(', ')}>{p.queues.slice(0, 3).join(', ')}{p.queues.length > 3 && <span className="muted"> +{p.queues.length - 3} more</span>}</td>
                  <td>{p.labels.map((l) => <span key={l} className="badge">{l}</span>)}</td>
                  <td>
                    {gone ? <span className="muted">—</span> : <div className="bar" role="meter" aria-valuemin={0} aria-valuemax={p.concurrency} aria-valuenow={p.busy} aria-label={`${p.busy} of ${p.concurrency} busy`}>
                      <div className="bar-fill" style={{ width: `${pct}%` }} />
                      <span className="bar-text">{p.busy} / {p.concurrency}</span>
                    </div>}
                  </td>
                  {acts && (
                    <td>
                      {!gone && detail && (
                        <ProcessActions conn={acts} identity={detail.identity} quiet={detail.quiet} onDone={() => void qc.invalidateQueries({ queryKey: ['current', acts.id] })} />
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
            {!rows.length && <tr><td colSpan={acts ? 8 : 7} className="muted">No worker processes reported.</td></tr>}
          </tbody>
        </table>
      </div>
    </section>
  );
}
