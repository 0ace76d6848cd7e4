// The Queues, Retries, Scheduled and Dead pages for a sidekiq connection: the same lists, from the
// connection's peeks into its Redis (someone's production Sidekiq), with the same actions as this
// server's job system once the connection allows changes; until then read-only, saying how to allow them.
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
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
import { JobActions } from '../../components/jobs/JobActions.tsx';
import { ConfirmButton } from '../../components/jobs/ConfirmButton.tsx';
import { setActions } from '../../components/jobs/set-actions.ts';
import { jobActionsApi } from '../../api/job-actions.ts';

const PER_PAGE = 25;

/** Said where actions would be while the connection does not allow them: how to allow them. */
export function ReadOnlyNote({ conn }: { conn: ConnectionView }) {
  if (conn.allow_changes) return null;
  return (
    <p className="muted small" data-testid="read-only-note">
      Read-only: “{conn.name}” is a Sidekiq read through its Redis. To retry, delete or kill its jobs and quiet or stop its processes from here, turn on “Allow changes” for {conn.name} in{' '}
      <a href="#/connections">Connections</a>.
    </p>
  );
}

/** Refetches every peek of the connection after an action, so the row that was acted on goes. */
function useAfterAction(connId: string): () => Promise<void> {
  const qc = useQueryClient();
  return async () => {
    await qc.invalidateQueries({ queryKey: ['sidekiq-peek', connId] });
    await qc.invalidateQueries({ queryKey: ['current', connId] });
  };
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
  const refresh = useAfterAction(conn.id);
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
          {conn.allow_changes && (
            <ConfirmButton
              label="Clear queue"
              danger
              confirmLabel="Clear queue"
              question={`Delete every job waiting in ${name} (${num(total)}) on ${conn.name}, and the queue itself? They will never run.`}
              run={() => jobActionsApi.clearQueue(client, conn.id, name)}
              onDone={() => void refresh()}
              testId="queue-clear"
            />
          )}
        </div>
        <ReadOnlyNote conn={conn} />
        {jobs.error && <p className="error" role="alert">{(jobs.error as Error).message}</p>}
        <JobTable
          rows={(jobs.data?.jobs ?? []).map((j, i) => fromPeek(j, (page - 1) * PER_PAGE + i, { queue: name }))}
          columns={['id', 'class', 'args', 'enqueued']}
          label={`Jobs of ${name}`}
          empty={jobs.data ? 'No job is waiting.' : 'Loading…'}
          testId="queue-jobs"
          rowActions={conn.allow_changes ? (r) => r.actionKey && <JobActions conn={conn} target={{ kind: 'queued', queue: name, jid: r.actionKey, label: r.class }} onDone={() => void refresh()} /> : undefined}
        />
        {total > PER_PAGE && <Pager page={page} perPage={PER_PAGE} total={total} onPage={setPage} label="Queue pages" loading={jobs.isPlaceholderData} />}
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
  const refresh = useAfterAction(conn.id);
  const [page, setPage] = useListPage();
  const spec = SETS[set];
  const key = spec.peek;
  const after = async (text: string) => {
    await refresh();
    return text;
  };
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
      rows={(jobs.data?.jobs ?? []).map((j, i) => fromPeek(j, (page - 1) * PER_PAGE + i, key))}
      total={jobs.data?.total ?? 0}
      page={page}
      perPage={PER_PAGE}
      onPage={setPage}
      loading={jobs.isPlaceholderData}
      columns={spec.columns}
      retryWord={key === 'schedule' ? 'Add to queue' : 'Retry'}
      readOnlyNote={<ReadOnlyNote conn={conn} />}
      actions={conn.allow_changes ? setActions(client, conn.id, key, { kill: key !== 'dead' }, after) : undefined}
      rowActions={conn.allow_changes ? (r) => r.actionKey && <JobActions conn={conn} target={{ kind: 'entry', set: key, key: r.actionKey, label: r.class }} onDone={() => void refresh()} /> : undefined}
      empty={jobs.data ? spec.empty : 'Loading…'}
      error={jobs.error ? (jobs.error as Error).message : null}
    />
  );
}
