// Every queue of the latest sample: sortable, filterable, pinnable, virtualized so that hundreds
// of queues scroll smoothly (only the visible rows are in the DOM). On this server's own
// connection a queue can be deleted (after a confirm). Whether ✕ is offered follows the server's
// queue views (`deletable`, the rule DELETE applies): a built-in, demo or Sidekiq app's queue keeps a
// focusable ✕ marked aria-disabled with the server's reason, as on the queue's own page.
import { useMemo, useRef, useState, type ReactNode } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import type { CurrentSample, History } from '../../api/client.ts';
import { Sparkline } from '../../components/Sparkline.tsx';
import { backlogTrend, slopePerMinute, trendText } from '../../components/queue-trend.ts';
import { Glossary } from '../../components/glossary.tsx';
import { humanDuration, num } from '../../components/format.ts';
import { isString, useUiState } from '../../app/ui-state.ts';
import { jobsApi, type QueueView } from '../../api/jobs.ts';
import { usePace } from '../../app/pace.tsx';

type SortKey = 'name' | 'backlog' | 'latency';
const ROW = 34;

function usePins(connectionId: string): [Set<string>, (q: string) => void] {
  const key = `jobscope.pins.${connectionId}`;
  const [pins, setPins] = useState<Set<string>>(() => new Set(JSON.parse(localStorage.getItem(key) ?? '[]') as string[]));
  const toggle = (q: string) =>
    setPins((p) => {
      const n = new Set(p);
      if (n.has(q)) n.delete(q);
      else n.add(q);
      localStorage.setItem(key, JSON.stringify([...n]));
      return n;
    });
  return [pins, toggle];
}

export function QueuesTable({ connectionId, current, spark, trends, deletable = false }: { connectionId: string; current: CurrentSample | null | undefined; spark: History | undefined; trends: History | undefined; deletable?: boolean }) {
  const client = useClient();
  const [filter, setFilter] = useUiState('dashboard.queues-filter', '', isString); // remembered across restarts
  // Deleted here: hidden until the next sample no longer has them.
  const [deleted, setDeleted] = useState<Set<string>>(() => new Set());
  const [notice, setNotice] = useState<{ error: boolean; text: string } | null>(null);
  const remove = useMutation({
    mutationFn: (name: string) => client.deleteQueue(name),
    onSuccess: (r) => {
      setDeleted((d) => new Set(d).add(r.name));
      setNotice({ error: false, text: `Deleted queue ${r.name}${r.dropped ? ` and its ${r.dropped} waiting job${r.dropped === 1 ? '' : 's'}` : ''}.` });
    },
    onError: (err) => setNotice({ error: true, text: err instanceof Error ? err.message : String(err) }),
  });
  // Same query as the Queues page (shared cache); only on this server's own connection.
  const views = useQuery({ queryKey: ['jobs', 'queues'], queryFn: () => jobsApi.queues(client), refetchInterval: usePace(5000), enabled: deletable });
  const viewByName = useMemo(() => new Map<string, QueueView>((views.data ?? []).map((q) => [q.name, q])), [views.data]);
  const confirmDelete = (name: string) => {
    const refusal = viewByName.get(name)?.delete_refusal;
    // A queue the views do not list yet (newer than their last read) is left to the server to judge.
    if (refusal) return setNotice({ error: true, text: refusal });
    if (confirm(`Delete queue ${name}? Its waiting and retrying jobs are dropped; dead jobs stay in the dead set.`)) remove.mutate(name);
  };
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'backlog', desc: true });
  const [pins, togglePin] = usePins(connectionId);
  const scroller = useRef<HTMLDivElement>(null);

  const rows = useMemo(() => {
    const entries = Object.entries(current?.queues ?? {})
      .filter(([name]) => !deleted.has(name))
      .map(([name, q]) => ({ name, backlog: q.backlog, latency: q.latency }));
    const f = filter.trim().toLowerCase();
    const kept = f ? entries.filter((r) => r.name.toLowerCase().includes(f)) : entries;
    const dir = sort.desc ? -1 : 1;
    kept.sort((a, b) => {
      const pa = pins.has(a.name) ? 0 : 1;
      const pb = pins.has(b.name) ? 0 : 1;
      if (pa !== pb) return pa - pb;
      const c = sort.key === 'name' ? a.name.localeCompare(b.name) : a[sort.key] - b[sort.key];
      return c !== 0 ? c * dir : a.name.localeCompare(b.name);
    });
    return kept;
  }, [current, filter, sort, pins, deleted]);

  // eslint-disable-next-line react-hooks/incompatible-library -- no React Compiler here; nothing memoizes over `virtual`, which is read fresh each render
  const virtual = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 8 });

  // aria-sort belongs on the column header, not on the button inside it (ARIA allows it there only).
  const header = (key: SortKey, label: ReactNode, className: string) => (
    <span role="columnheader" className={className} aria-sort={sort.key === key ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
      <button className="th" onClick={() => setSort((s) => ({ key, desc: s.key === key ? !s.desc : key !== 'name' }))} data-testid={`queues-sort-${key}`}>
        {label} {sort.key === key ? (sort.desc ? '▼' : '▲') : ''}
      </button>
    </span>
  );

  return (
    <section className="card" aria-labelledby="queues-h">
      <div className="card-head">
        <h3 id="queues-h">Queues <span className="muted small" data-testid="queues-count">{rows.length}</span></h3>
        <input type="search" placeholder="Filter queues" value={filter} onChange={(e) => setFilter(e.target.value)} aria-label="Filter queues" data-testid="queues-filter" />
      </div>
      {notice && <p className={`small ${notice.error ? 'error' : 'muted'}`} role="status" data-testid="queue-delete-message">{notice.text}</p>}
      <div className="vtable" role="table" aria-label="Queues" data-testid="queues-table">
        <div className={`vrow vhead${deletable ? ' with-actions' : ''}`} role="row">
          <span role="columnheader" className="c-pin"><span className="sr-only">Pinned</span></span>
          {header('name', 'Name', 'c-name')}
          {header('backlog', <Glossary term="backlog">Backlog</Glossary>, 'c-num')}
          {header('latency', <Glossary term="latency">Latency</Glossary>, 'c-num')}
          <span role="columnheader" className="c-spark">Backlog trend</span>
          <span role="columnheader" className="c-trend">Trend (5 min)</span>
          {deletable && <span role="columnheader" className="c-act"><span className="sr-only">Actions</span></span>}
        </div>
        <div ref={scroller} className="vbody" style={{ height: Math.min(360, Math.max(ROW, rows.length * ROW)) }}>
          <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
            {virtual.getVirtualItems().map((v) => {
              const r = rows[v.index]!;
              const pinned = pins.has(r.name);
              return (
                <div key={r.name} role="row" className={`vrow${pinned ? ' pinned' : ''}${deletable ? ' with-actions' : ''}`} style={{ position: 'absolute', top: 0, transform: `translateY(${v.start}px)`, height: ROW, width: '100%' }} data-testid="queue-row" data-queue={r.name}>
                  <span role="cell" className="c-pin">
                    <button className="ghost icon" onClick={() => togglePin(r.name)} aria-pressed={pinned} aria-label={pinned ? `Unpin ${r.name}` : `Pin ${r.name}`} data-testid="queue-pin">
                      {pinned ? '★' : '☆'}
                    </button>
                  </span>
                  <span role="cell" className="c-name" title={r.name}><a href={`#/queues/${encodeURIComponent(r.name)}`} data-testid="queue-link">{r.name}</a></span>
                  <span role="cell" className="c-num" data-testid="queue-backlog">{num(r.backlog)}</span>
                  <span role="cell" className="c-num" data-testid="queue-latency">{humanDuration(r.latency)}</span>
                  <span role="cell" className="c-spark"><Sparkline values={spark?.queues[r.name]?.backlog} /></span>
                  <span role="cell" className="c-trend small" data-testid="queue-trend">{trendText(backlogTrend(trends ? slopePerMinute(trends.t, trends.queues[r.name]?.backlog ?? []) : null, r.backlog))}</span>
                  {deletable && (
                    <span role="cell" className="c-act">
                      <button
                        className="ghost icon danger"
                        onClick={() => confirmDelete(r.name)}
                        disabled={remove.isPending}
                        aria-disabled={viewByName.get(r.name)?.deletable === false || undefined}
                        aria-label={`Delete queue ${r.name}`}
                        title={viewByName.get(r.name)?.delete_refusal ?? 'Delete queue'}
                        data-testid="queue-delete"
                        data-deletable={viewByName.has(r.name) ? String(viewByName.get(r.name)!.deletable) : undefined}
                      >
                        ✕
                      </button>
                    </span>
                  )}
                </div>
              );
            })}
          </div>
        </div>
        {!rows.length && <p className="muted small pad">{current ? 'No queues match.' : 'No sample yet.'}</p>}
      </div>
    </section>
  );
}
