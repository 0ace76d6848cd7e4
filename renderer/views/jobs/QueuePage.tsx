// One queue, as Sidekiq Web's queue page: size and latency, the next jobs in the order workers
// take them (paged), its origin, and Delete where the server's view says DELETE accepts it.
import { useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { navigate } from '../../app/route.ts';
import { ApiError } from '../../api/client.ts';
import { jobsApi } from '../../api/jobs.ts';
import { humanDuration, num } from '../../components/format.ts';
import { JobTable } from '../../components/jobs/JobTable.tsx';
import { Pager } from '../../components/jobs/Pager.tsx';
import { fromQueued, stamp } from '../../components/jobs/job-row.ts';
import { OriginBadge, QueueDeleteButton } from './QueueDelete.tsx';
import { usePace } from '../../app/pace.tsx';
import { useSelectedConnection } from '../../app/connection-context.tsx';
import { QueueTrendFact } from './QueueTrendFact.tsx';
import { useListPage } from './list-page.ts';

const PER_PAGE = 25;

export function QueuePage({ name }: { name: string }) {
  const client = useClient();
  const { id: connectionId } = useSelectedConnection();
  const qc = useQueryClient();
  const [page, setPage] = useListPage();
  const queue = useQuery({ queryKey: ['jobs', 'queue', name], queryFn: () => jobsApi.queue(client, name), refetchInterval: usePace(2000), retry: false });
  const jobs = useQuery({
    queryKey: ['jobs', 'queue', name, 'jobs', page],
    queryFn: () => jobsApi.queueJobs(client, name, page, PER_PAGE),
    refetchInterval: usePace(2000),
    retry: false,
    placeholderData: keepPreviousData,
  });
  const [message, setMessage] = useState<string | null>(null);
  const remove = useMutation({
    mutationFn: () => jobsApi.deleteQueue(client, name),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['jobs', 'queues'] });
      navigate('/queues');
    },
    onError: (err) => setMessage(err instanceof Error ? err.message : String(err)),
  });

  if (queue.error instanceof ApiError && queue.error.status === 404) {
    return <p className="card" role="status" data-testid="queue-missing">There is no queue <code>{name}</code> (any more). <a href="#/queues">All queues</a></p>;
  }
  const q = queue.data;
  const total = jobs.data?.total ?? 0;
  return (
    <>
      <div className="card">
        {queue.error && <p className="error">{(queue.error as Error).message}</p>}
        <dl className="facts" data-testid="queue-facts">
          <dt>Size</dt><dd data-testid="queue-size">{num(q?.backlog)}</dd>
          <dt>Latency</dt><dd data-testid="queue-latency">{q ? humanDuration(q.latency) : '—'}</dd>
          <QueueTrendFact connectionId={connectionId} name={name} backlog={q?.backlog} />
          <dt>Oldest enqueued</dt><dd>{stamp(q?.oldest_enqueued_at)}</dd>
          <dt>Processes</dt><dd>{q?.processes ?? '—'}</dd>
          <dt>Origin</dt><dd>{q ? <OriginBadge q={q} /> : '—'}</dd>
          <dt>Kind</dt><dd>{!q ? '—' : q.origin === 'sidekiq_app' ? 'the app’s jobs' : q.builtin ? 'built-in (Jobscope’s own jobs)' : q.durable ? 'synthetic' : 'demo load (memory)'}</dd>
        </dl>
        <div className="row gap" style={{ marginTop: 10 }}>
          {q && <QueueDeleteButton q={q} text="Delete queue" busy={remove.isPending} onDelete={() => remove.mutate()} testId="queue-page-delete" />}
          {q && !q.deletable && <span className="muted small" data-testid="queue-not-deletable">{q.delete_refusal}</span>}
          {message && <span className="error small" role="status" data-testid="queue-page-message">{message}</span>}
        </div>
      </div>
      <section className="card" aria-labelledby="next-jobs-h">
        <div className="card-head">
          <h3 id="next-jobs-h">Next jobs</h3>
          <span className="muted small">in the order workers take them; running jobs are not listed</span>
        </div>
        {jobs.error && <p className="error">{(jobs.error as Error).message}</p>}
        <JobTable rows={(jobs.data?.items ?? []).map(fromQueued)} columns={['id', 'class', 'args', 'enqueued']} label={`Next jobs of ${name}`} empty={jobs.data ? 'No job is waiting.' : 'Loading…'} testId="queue-jobs" />
        {total > PER_PAGE && <Pager page={page} perPage={PER_PAGE} total={total} onPage={setPage} label="Next jobs pages" loading={jobs.isPlaceholderData} />}
      </section>
    </>
  );
}
