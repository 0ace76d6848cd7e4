// Every queue of the latest sample: sortable, filterable, pinnable, virtualized so that hundreds
// of queues scroll smoothly (only the visible rows are in the DOM).
import { useMemo, useRef, useState, type ReactNode } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { CurrentSample, History } from '../../api/client.ts';
import { Sparkline } from '../../components/Sparkline.tsx';
import { Glossary } from '../../components/glossary.tsx';
import { humanDuration, num } from '../../components/format.ts';

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

export function QueuesTable({ connectionId, current, spark }: { connectionId: string; current: CurrentSample | null | undefined; spark: History | undefined }) {
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'backlog', desc: true });
  const [pins, togglePin] = usePins(connectionId);
  const scroller = useRef<HTMLDivElement>(null);

  const rows = useMemo(() => {
    const entries = Object.entries(current?.queues ?? {}).map(([name, q]) => ({ name, backlog: q.backlog, latency: q.latency }));
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
  }, [current, filter, sort, pins]);

  const virtual = useVirtualizer({ count: rows.length, getScrollElement: () => scroller.current, estimateSize: () => ROW, overscan: 8 });

  const header = (key: SortKey, label: ReactNode) => (
    <button className="th" onClick={() => setSort((s) => ({ key, desc: s.key === key ? !s.desc : key !== 'name' }))} aria-sort={sort.key === key ? (sort.desc ? 'descending' : 'ascending') : 'none'} data-testid={`queues-sort-${key}`}>
      {label} {sort.key === key ? (sort.desc ? '▼' : '▲') : ''}
    </button>
  );

  return (
    <section className="card" aria-labelledby="queues-h">
      <div className="card-head">
        <h3 id="queues-h">Queues <span className="muted small" data-testid="queues-count">{rows.length}</span></h3>
        <input type="search" placeholder="Filter queues" value={filter} onChange={(e) => setFilter(e.target.value)} aria-label="Filter queues" data-testid="queues-filter" />
      </div>
      <div className="vtable" role="table" aria-label="Queues" data-testid="queues-table">
        <div className="vrow vhead" role="row">
          <span role="columnheader" className="c-pin" />
          <span role="columnheader" className="c-name">{header('name', 'Name')}</span>
          <span role="columnheader" className="c-num">{header('backlog', <Glossary term="backlog">Backlog</Glossary>)}</span>
          <span role="columnheader" className="c-num">{header('latency', <Glossary term="latency">Latency</Glossary>)}</span>
          <span role="columnheader" className="c-spark">Backlog trend</span>
        </div>
        <div ref={scroller} className="vbody" style={{ height: Math.min(360, Math.max(ROW, rows.length * ROW)) }}>
          <div style={{ height: virtual.getTotalSize(), position: 'relative' }}>
            {virtual.getVirtualItems().map((v) => {
              const r = rows[v.index]!;
              const pinned = pins.has(r.name);
              return (
                <div key={r.name} role="row" className={`vrow${pinned ? ' pinned' : ''}`} style={{ position: 'absolute', top: 0, transform: `translateY(${v.start}px)`, height: ROW, width: '100%' }} data-testid="queue-row" data-queue={r.name}>
                  <span role="cell" className="c-pin">
                    <button className="ghost icon" onClick={() => togglePin(r.name)} aria-pressed={pinned} aria-label={pinned ? `Unpin ${r.name}` : `Pin ${r.name}`} data-testid="queue-pin">
                      {pinned ? '★' : '☆'}
                    </button>
                  </span>
                  <span role="cell" className="c-name" title={r.name}>{r.name}</span>
                  <span role="cell" className="c-num" data-testid="queue-backlog">{num(r.backlog)}</span>
                  <span role="cell" className="c-num" data-testid="queue-latency">{humanDuration(r.latency)}</span>
                  <span role="cell" className="c-spark"><Sparkline values={spark?.queues[r.name]?.backlog} /></span>
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
