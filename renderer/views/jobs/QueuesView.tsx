// #/queues: every queue of the embedded job system with its origin (Jobscope's or, with --redis, a
// Sidekiq app's); #/queues/<name>: one queue's page (next jobs, Delete where the server allows it).
// A sidekiq connection's queues are shown read-only; a GitLab connection's cannot be browsed at all.
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { jobsApi, type QueueView } from '../../api/jobs.ts';
import { humanDuration, num } from '../../components/format.ts';
import type { ViewProps } from '../view-props.ts';
import { JobsNav, JobsUnavailable, useSelectedConnectionView } from './job-source.tsx';
import { QueuePage } from './QueuePage.tsx';
import { OriginBadge } from './QueueDelete.tsx';
import { SidekiqQueueList, SidekiqQueuePage } from './SidekiqJobs.tsx';
import './jobs.css';
import { usePace } from '../../app/pace.tsx';

export default function QueuesView({ route }: ViewProps) {
  const name = route.rest[0];
  const { conn } = useSelectedConnectionView();
  const body = () => {
    if (conn?.kind === 'gitlab') return <JobsUnavailable conn={conn} what={name ? 'A queue’s jobs' : 'Queues'} />;
    if (conn?.kind === 'sidekiq') return name ? <SidekiqQueuePage key={name} conn={conn} name={name} /> : <SidekiqQueueList conn={conn} />;
    return name ? <QueuePage key={name} name={name} /> : <QueueList />;
  };
  return (
    <section className="view" data-testid={name ? 'view-queue' : 'view-queues'}>
      <div className="toolbar">
        <h2>{name ? <>Queue <code>{name}</code></> : 'Queues'}</h2>
        <span className="spacer" />
        <JobsNav current="queues" scheduled={conn?.kind === 'sidekiq'} />
      </div>
      {body()}
    </section>
  );
}

function QueueList() {
  const client = useClient();
  const queues = useQuery({ queryKey: ['jobs', 'queues'], queryFn: () => jobsApi.queues(client), refetchInterval: usePace(2000) });
  const rows = [...(queues.data ?? [])].sort((a, b) => b.backlog - a.backlog || a.name.localeCompare(b.name));
  return (
    <div className="card table-wrap">
      {queues.error && <p className="error">{(queues.error as Error).message}</p>}
      <table aria-label="Queues" data-testid="queue-list">
        <thead>
          <tr>
            <th scope="col">Queue</th><th scope="col">Origin</th><th scope="col" className="c-num">Size</th><th scope="col" className="c-num">Latency</th>
            <th scope="col" className="c-num">Processes</th><th scope="col">Kind</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((q) => (
            <tr key={q.name} data-queue={q.name} data-testid="queue-list-row">
              <td><a href={`#/queues/${encodeURIComponent(q.name)}`}>{q.name}</a></td>
              <td><OriginBadge q={q} /></td>
              <td className="c-num">{num(q.backlog)}</td>
              <td className="c-num">{humanDuration(q.latency)}</td>
              <td className="c-num">{q.processes}</td>
              <td>{kindOf(q)}</td>
            </tr>
          ))}
          {queues.data && !rows.length && <tr><td colSpan={6} className="muted">No queues.</td></tr>}
        </tbody>
      </table>
    </div>
  );
}

function kindOf(q: QueueView): string {
  if (q.origin === 'sidekiq_app') return 'the app’s jobs';
  return q.builtin ? 'built-in' : q.durable ? 'synthetic' : 'demo (memory)';
}
