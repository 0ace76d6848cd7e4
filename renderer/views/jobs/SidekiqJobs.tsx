// The Queues, Retries, Scheduled and Dead pages for a sidekiq connection: the same lists, read-only, from the
// connection's peeks into its Redis (someone's production Sidekiq: Sidekiq Web is where to act).
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import type { ConnectionView } from '../../api/client.ts';
import { humanDuration, num } from '../../components/format.ts';
import { JobSetPanel } from '../../components/jobs/JobSetPanel.tsx';
import { JobTable } from '../../components/jobs/JobTable.tsx';
import { Pager } from '../../components/jobs/Pager.tsx';
import { DEAD_COLUMNS, RETRY_COLUMNS, SCHEDULED_COLUMNS, fromPeek } from '../../components/jobs/job-row.ts';
import { QueueTrendFact } from './QueueTrendFact.tsx';
import { usePace } from '../../app/pace.tsx';
import { useListPage } from './list-page.ts';

const PER_PAGE = 25;

export function ReadOnlyNote({ conn }: { conn: ConnectionView }) {
  return (
    <p className="muted small" data-testid="read-only-note">
      Read-only: “{conn.name}” is a Sidekiq read through its Redis. Jobscope shows its jobs but does not retry or delete them; use Sidekiq Web for that.
    </p>
  );
}

export function SidekiqQueueList({ conn }: { conn: ConnectionView }) {
  const client = useClient();
  const current = useQuery({ queryKey: ['current', conn.id], queryFn: () => client.current(conn.id), refetchInterval: usePace(5000) });
  const rows = Object.entries(current.data?.queues ?? {}).sort(([a, x], [b, y]) => y.backlog - x.backlog || a.localeCompare(b));
  return (
    <div className="card table-wrap">
      <ReadOnlyNote conn={conn} />
      {current.error && <p className="error">{(current.error as Error).message}</p>}
      <table aria-label={`Queues of ${conn.name}`} data-testid="queue-list">
        <thead><tr><th scope="col">Queue</th><th scope="col" className="c-num">Size</th><th scope="col" className="c-num">Latency</th></tr></thead>
        <tbody>
          {rows.map(([name, q]) => (
            <tr key={name} data-queue={name}>
              <td><a href={`#/queues/${encodeURIComponent(name)}`}>{name}</a></td>
              <td className="c-num">{num(q.backlog)}</td>
              <td className="c-num">{humanDuration(q.latency)}</td>
            </tr>
          ))}
          {current.data !== undefined && !rows.length && <tr><td colSpan={3} className="muted">{current.data ? 'No queues.' : 'No sample yet.'}</td></tr>}
        </tbody>
      </table>
    </div>
  );
}

export function SidekiqQueuePage({ conn, name }: { conn: ConnectionView; name: string }) {
  const client = useClient();
  const [page, setPage] = useListPage();
  const jobs = useQuery({
    queryKey: ['sidekiq-peek', conn.id, 'queue', name, page],
    queryFn: () => client.peekSidekiqQueue(conn.id, name, page, PER_PAGE),
    refetchInterval: usePace(5000),
    placeholderData: keepPreviousData,
  });
  const total = jobs.data?.total ?? 0;
  return (
    <>
      {/* What Sidekiq Web's queue page shows first: its size and latency, read with the page. */}
      <div className="card">
        <dl className="facts" data-testid="queue-facts">
          <dt>Size</dt><dd data-testid="queue-size">{jobs.data ? num(total) : '—'}</dd>
          <dt>Latency</dt><dd data-testid="queue-latency">{jobs.data?.latency !== undefined ? humanDuration(jobs.data.latency) : '—'}</dd>
          <QueueTrendFact connectionId={conn.id} name={name} backlog={jobs.data?.total} />
        </dl>
      </div>
      <section className="card" aria-labelledby="next-jobs-h">
        <div className="card-head">
          <h3 id="next-jobs-h">Jobs</h3>
          <span className="muted small">newest first, as Sidekiq Web lists them</span>
        </div>
        <ReadOnlyNote conn={conn} />
        {jobs.error && <p className="error" role="alert">{(jobs.error as Error).message}</p>}
        <JobTable rows={(jobs.data?.jobs ?? []).map((j, i) => fromPeek(j, (page - 1) * PER_PAGE + i, { queue: name }))} columns={['id', 'class', 'args', 'enqueued']} label={`Jobs of ${name}`} empty={jobs.data ? 'No job is waiting.' : 'Loading…'} testId="queue-jobs" />
        {total > PER_PAGE && <Pager page={page} perPage={PER_PAGE} total={total} onPage={setPage} label="Queue pages" />}
      </section>
    </>
  );
}

const SETS = {
  retries: { peek: 'retry', title: 'Retries', setName: 'retry set', columns: RETRY_COLUMNS, empty: 'No job is waiting for a retry.' },
  scheduled: { peek: 'schedule', title: 'Scheduled', setName: 'scheduled set', columns: SCHEDULED_COLUMNS, empty: 'No job is scheduled.' },
  dead: { peek: 'dead', title: 'Dead', setName: 'dead set', columns: DEAD_COLUMNS, empty: 'The dead set is empty.' },
} as const;

export function SidekiqSet({ conn, set }: { conn: ConnectionView; set: keyof typeof SETS }) {
  const client = useClient();
  const [page, setPage] = useListPage();
  const spec = SETS[set];
  const jobs = useQuery({
    queryKey: ['sidekiq-peek', conn.id, spec.peek, page],
    queryFn: () => client.peekSidekiqSet(conn.id, spec.peek, page, PER_PAGE),
    refetchInterval: usePace(5000),
    placeholderData: keepPreviousData,
  });
  return (
    <JobSetPanel
      title={spec.title}
      setName={spec.setName}
      rows={(jobs.data?.jobs ?? []).map((j, i) => fromPeek(j, (page - 1) * PER_PAGE + i, spec.peek))}
      total={jobs.data?.total ?? 0}
      page={page}
      perPage={PER_PAGE}
      onPage={setPage}
      columns={spec.columns}
      readOnlyNote={<ReadOnlyNote conn={conn} />}
      empty={jobs.data ? spec.empty : 'Loading…'}
      error={jobs.error ? (jobs.error as Error).message : null}
    />
  );
}
