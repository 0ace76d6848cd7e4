// A read-only look into a sidekiq connection: its queues, retry, scheduled and dead sets, one page
// at a time (class, arguments cut short, times, error). Nothing here deletes or retries: it is
// someone's production Redis; Sidekiq Web is the place to act.
import { useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { ConnectionView, PeekPage } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';
import { usePace } from '../../app/pace.tsx';
import { dateTime, num } from '../../components/format.ts';

const PER_PAGE = 25;
type Source = { kind: 'queue'; name: string } | { kind: 'set'; name: 'retry' | 'schedule' | 'dead' };
const SET_LABEL = { retry: 'Retries', schedule: 'Scheduled', dead: 'Dead' } as const;

const when = (iso: string | null) => dateTime(iso);

export function SidekiqPeek({ connection, onClose }: { connection: ConnectionView; onClose: () => void }) {
  const client = useClient();
  const [source, setSource] = useState<Source>({ kind: 'set', name: 'retry' });
  const [page, setPage] = useState(1);
  const pace = usePace(10_000);
  const current = useQuery({ queryKey: ['current', connection.id], queryFn: () => client.current(connection.id), refetchInterval: pace });
  const jobs = useQuery<PeekPage>({
    queryKey: ['sidekiq-peek', connection.id, source.kind, source.name, page],
    queryFn: () => (source.kind === 'queue' ? client.peekSidekiqQueue(connection.id, source.name, page, PER_PAGE) : client.peekSidekiqSet(connection.id, source.name, page, PER_PAGE)),
    placeholderData: keepPreviousData,
    refetchInterval: pace,
  });
  const queues = Object.entries(current.data?.queues ?? {});
  const extras = current.data?.sidekiq;
  const pages = Math.max(1, Math.ceil((jobs.data?.total ?? 0) / PER_PAGE));
  const pick = (s: Source) => {
    setSource(s);
    setPage(1);
  };
  const selected = source.kind === 'queue' ? `queue:${source.name}` : source.name;
  // The chosen source's count is the one its table was read with, not the last sample's (taken up
  // to an interval earlier): the menu and the caption above the rows say the same number.
  const read = jobs.data && !jobs.isPlaceholderData ? jobs.data.total : undefined;
  const count = (value: string, sampled: number | undefined) => {
    const n = value === selected && read !== undefined ? read : sampled;
    return n === undefined ? '' : ` (${num(n)})`;
  };

  return (
    <section className="card" aria-labelledby="peek-h" data-testid="sidekiq-peek">
      <div className="row gap">
        <h3 id="peek-h">Peek into {connection.name} <span className="muted small">(read-only)</span></h3>
        <button type="button" className="ghost" onClick={onClose} data-testid="peek-close">Close</button>
      </div>
      <label className="row gap">
        Show
        <select
          value={selected}
          onChange={(e) => {
            const v = e.target.value;
            if (v.startsWith('queue:')) pick({ kind: 'queue', name: v.slice('queue:'.length) });
            else pick({ kind: 'set', name: v as 'retry' | 'schedule' | 'dead' });
          }}
          data-testid="peek-source"
        >
          {(['retry', 'schedule', 'dead'] as const).map((s) => (
            <option key={s} value={s}>{SET_LABEL[s]}{count(s, extras?.[`${s === 'schedule' ? 'scheduled' : s}_size`])}</option>
          ))}
          {queues.map(([name, q]) => <option key={name} value={`queue:${name}`}>queue {name}{count(`queue:${name}`, q.backlog)}</option>)}
        </select>
      </label>
      {current.error && <p className="error small">{(current.error as Error).message}</p>}
      {jobs.error && <p className="error" role="alert">{(jobs.error as Error).message}</p>}
      <div className="table-wrap">
        <table data-testid="peek-table">
          <caption className="muted small">{jobs.data ? `${num(jobs.data.total)} job${jobs.data.total === 1 ? '' : 's'}` : 'Loading…'}</caption>
          <thead>
            <tr><th scope="col">Class</th><th scope="col">Arguments</th><th scope="col">{source.kind === 'queue' ? 'Enqueued' : 'Failed'}</th><th scope="col">{source.name === 'dead' ? 'Died' : source.kind === 'set' ? 'Runs' : 'Queue'}</th><th scope="col">Error</th></tr>
          </thead>
          <tbody>
            {(jobs.data?.jobs ?? []).map((j, i) => (
              <tr key={`${j.jid ?? ''}-${i}`} data-testid="peek-row">
                <td>{j.class}</td>
                <td className="wrap"><code>{j.args}</code>{j.args_truncated && <span className="muted small"> (cut)</span>}</td>
                <td>{when(source.kind === 'queue' ? j.enqueued_at : j.failed_at)}</td>
                <td>{source.kind === 'set' ? when(j.at) : (j.queue ?? '—')}</td>
                <td className="wrap">{j.error ?? '—'}{j.retry_count !== null && <span className="muted small"> (retried {j.retry_count}×)</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="row gap">
        <button type="button" className="ghost" disabled={page <= 1} onClick={() => setPage(page - 1)} data-testid="peek-prev">Previous</button>
        <span className="small">Page {page} of {pages}</span>
        <button type="button" className="ghost" disabled={page >= pages} onClick={() => setPage(page + 1)} data-testid="peek-next">Next</button>
      </div>
    </section>
  );
}
