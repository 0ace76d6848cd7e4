// The Retries, Scheduled and Dead pages. The embedded job system's sets: one page, polled, with
// retry and delete through JobSetPanel and JobActions over the action routes, as a sidekiq
// connection's set (SidekiqJobs.tsx); for a GitLab connection the page says it is not available.
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { jobsApi } from '../../api/jobs.ts';
import { JobSetPanel } from '../../components/jobs/JobSetPanel.tsx';
import { JobActions } from '../../components/jobs/JobActions.tsx';
import { setActions } from '../../components/jobs/set-actions.ts';
import type { ConnectionView } from '../../api/client.ts';
import { DEAD_COLUMNS, RETRY_COLUMNS, fromDead, fromFailed } from '../../components/jobs/job-row.ts';
import { JobsNav, JobsUnavailable, useSelectedConnectionView } from './job-source.tsx';
import { SidekiqSet } from './SidekiqJobs.tsx';
import './jobs.css';
import { usePace } from '../../app/pace.tsx';
import { useListPage } from './list-page.ts';

const PER_PAGE = 25;

const SETS = {
  retries: {
    title: 'Retries',
    setName: 'retry set',
    columns: RETRY_COLUMNS,
    empty: 'No job is waiting for a retry.',
    list: jobsApi.retries,
  },
  dead: {
    title: 'Dead',
    setName: 'dead set',
    columns: DEAD_COLUMNS,
    empty: 'The dead set is empty.',
    list: jobsApi.dead,
  },
} as const;

const WHAT = { retries: 'Retries', scheduled: 'Scheduled jobs', dead: 'Dead jobs' } as const;

export function FailedSetView({ set }: { set: 'retries' | 'scheduled' | 'dead' }) {
  const { conn } = useSelectedConnectionView();
  return (
    <section className="view" data-testid={`view-${set}`}>
      <div className="toolbar">
        <h2>{set === 'scheduled' ? 'Scheduled' : SETS[set].title}</h2>
        <span className="spacer" />
        <JobsNav current={set} scheduled={conn?.kind === 'sidekiq'} />
      </div>
      {conn?.kind === 'gitlab' ? (
        <JobsUnavailable conn={conn} what={WHAT[set]} />
      ) : conn?.kind === 'sidekiq' ? (
        <SidekiqSet key={conn.id} conn={conn} set={set} />
      ) : set === 'scheduled' ? (
        <p className="card muted" role="note" data-testid="no-scheduled">This server’s job system has no scheduled set: its jobs are queued when they are pushed. A Sidekiq connection lists its scheduled jobs here.</p>
      ) : (
        <EmbeddedSet set={set} conn={conn} />
      )}
    </section>
  );
}

function EmbeddedSet({ set, conn }: { set: 'retries' | 'dead'; conn: ConnectionView | undefined }) {
  const client = useClient();
  const qc = useQueryClient();
  const spec = SETS[set];
  const [page, setPage] = useListPage();
  const list = useQuery({ queryKey: ['jobs', set, page], queryFn: () => spec.list(client, page, PER_PAGE), refetchInterval: usePace(3000), placeholderData: keepPreviousData });
  const after = async (text: string) => {
    await qc.invalidateQueries({ queryKey: ['jobs'] });
    return text;
  };
  const key = set === 'retries' ? 'retry' : 'dead';
  return (
    <JobSetPanel
      title={spec.title}
      setName={spec.setName}
      rows={(list.data?.items ?? []).map(set === 'dead' ? fromDead : fromFailed)}
      total={list.data?.total ?? 0}
      page={page}
      perPage={PER_PAGE}
      onPage={setPage}
      loading={list.isPlaceholderData}
      columns={spec.columns}
      actions={setActions(client, 'embedded', key, { kill: key === 'retry' }, after)}
      rowActions={conn ? (r) => <JobActions conn={conn} target={{ kind: 'entry', set: key, key: r.key, label: r.class }} onDone={() => void after('')} /> : undefined}
      empty={list.data ? spec.empty : 'Loading…'}
      error={list.error ? (list.error as Error).message : null}
    />
  );
}
