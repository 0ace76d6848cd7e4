// Which job system the Queues, Retries and Dead pages show: the selected connection's. Only this
// server's own (embedded) job system can be changed here; a sidekiq connection is shown read-only;
// a GitLab connection's metrics API reports queue sizes, not jobs, so for it the pages say so.
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { useSelectedConnection } from '../../app/connection-context.tsx';
import type { ConnectionView } from '../../api/client.ts';
import { usePace } from '../../app/pace.tsx';

export function useSelectedConnectionView(): { id: string; conn: ConnectionView | undefined; loading: boolean } {
  const client = useClient();
  const { id } = useSelectedConnection();
  const connections = useQuery({ queryKey: ['connections'], queryFn: client.connections, refetchInterval: usePace(5000) });
  return { id, conn: connections.data?.find((c) => c.id === id), loading: connections.isPending };
}

/** The notice shown instead of the lists for a connection whose jobs cannot be browsed here. */
export function JobsUnavailable({ conn, what }: { conn: ConnectionView; what: string }) {
  const how = 'a GitLab instance read over HTTP: its Sidekiq metrics API reports queue sizes and latency, not the jobs themselves';
  return (
    <div className="card" role="note" data-testid="jobs-unavailable">
      <p>
        <strong>{what} are not available for “{conn.name}”.</strong> It is {how}, so its jobs cannot be listed, retried or deleted from Jobscope.
      </p>
      <p className="muted small">Retry and delete work on this server’s own job system (“This Jobscope” in the header); a Sidekiq added through its Redis is shown read-only.</p>
    </div>
  );
}

/** Sub-navigation between the pages, as Sidekiq Web's top bar has them. */
export function JobsNav({ current }: { current: 'queues' | 'retries' | 'scheduled' | 'dead' }) {
  const items = [
    ['queues', 'Queues'],
    ['retries', 'Retries'],
    ['scheduled', 'Scheduled'],
    ['dead', 'Dead'],
  ] as const;
  return (
    <nav className="segmented jobs-nav" aria-label="Job sets" data-testid="jobs-nav">
      {items.map(([id, label]) => (
        <a key={id} href={`#/${id}`} className={id === current ? 'on' : ''} aria-current={id === current ? 'page' : undefined}>{label}</a>
      ))}
    </nav>
  );
}
