// The Retries and the Dead pages of the embedded job system: one page of the set, polled, with
// retry and delete through JobSetPanel. A sidekiq connection's set is shown read-only
// (SidekiqJobs.tsx); for a GitLab connection the page says it is not available.
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { jobsApi } from '../../api/jobs.ts';
import { JobSetPanel, type JobSetActions } from '../../components/jobs/JobSetPanel.tsx';
import { DEAD_COLUMNS, RETRY_COLUMNS, fromDead, fromFailed } from '../../components/jobs/job-row.ts';
import { JobsNav, JobsUnavailable, useSelectedConnectionView } from './job-source.tsx';
import { SidekiqSet } from './SidekiqJobs.tsx';
import './jobs.css';
import { usePace } from '../../app/pace.tsx';
import { useListPage } from './list-page.ts';

const PER_PAGE = 25;
const plural = (n: number) => `${n} job${n === 1 ? '' : 's'}`;
const gone = (missing: unknown[]) => (missing.length ? ` (${plural(missing.length)} had already left the set)` : '');

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

export function FailedSetView({ set }: { set: 'retries' | 'dead' }) {
  const { conn } = useSelectedConnectionView();
  const spec = SETS[set];
  return (
    <section className="view" data-testid={`view-${set}`}>
      <div className="toolbar">
        <h2>{spec.title}</h2>
        <span className="spacer" />
        <JobsNav current={set} scheduled={conn?.kind === 'sidekiq'} />
      </div>
      {conn?.kind === 'gitlab' ? <JobsUnavailable conn={conn} what={set === 'retries' ? 'Retries' : 'Dead jobs'} /> : conn?.kind === 'sidekiq' ? <SidekiqSet key={conn.id} conn={conn} set={set} /> : <EmbeddedSet set={set} />}
    </section>
  );
}

function EmbeddedSet({ set }: { set: 'retries' | 'dead' }) {
  const client = useClient();
  const qc = useQueryClient();
  const spec = SETS[set];
  const [page, setPage] = useListPage();
  const list = useQuery({ queryKey: ['jobs', set, page], queryFn: () => spec.list(client, page, PER_PAGE), refetchInterval: usePace(3000), placeholderData: keepPreviousData });
  const after = async (text: string) => {
    await qc.invalidateQueries({ queryKey: ['jobs'] });
    return text;
  };
  const actions: JobSetActions =
    set === 'retries'
      ? {
          retry: async (keys) => after(((r) => `Retried ${plural(r.count)} now${gone(r.missing)}.`)(await jobsApi.retryNow(client, keys))),
          remove: async (keys) => after(((r) => `Deleted ${plural(r.count)}${gone(r.missing)}.`)(await jobsApi.deleteRetries(client, keys))),
          retryAll: async () => after(`Retried ${plural((await jobsApi.retryNow(client)).count)} now.`),
          removeAll: async () => after(`Deleted ${plural((await jobsApi.clearRetries(client)).count)}.`),
        }
      : {
          retry: async (keys) => after(`Retried ${plural((await jobsApi.retryDead(client, keys)).count)}: back in their queues.`),
          remove: async (keys) => after(((r) => `Deleted ${plural(r.count)}${gone(r.missing)}.`)(await jobsApi.deleteDead(client, keys))),
          retryAll: async () => after(`Retried ${plural((await jobsApi.retryDead(client)).count)}: back in their queues.`),
          removeAll: async () => after(`Deleted ${plural((await jobsApi.clearDead(client)).count)}.`),
        };
  return (
    <JobSetPanel
      title={spec.title}
      setName={spec.setName}
      rows={(list.data?.items ?? []).map(set === 'dead' ? fromDead : fromFailed)}
      total={list.data?.total ?? 0}
      page={page}
      perPage={PER_PAGE}
      onPage={setPage}
      columns={spec.columns}
      actions={actions}
      empty={list.data ? spec.empty : 'Loading…'}
      error={list.error ? (list.error as Error).message : null}
    />
  );
}
