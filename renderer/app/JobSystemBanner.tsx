// A banner while the server's job system is degraded (its Redis unreachable at start or in an
// outage): the server's own sentence, gone by itself once it recovers.
import { useQuery } from '@tanstack/react-query';
import { useClient } from './client-context.tsx';
import { usePace } from './pace.tsx';

const POLL_MS = 5000;

export function JobSystemBanner() {
  const client = useClient();
  const pace = usePace(POLL_MS);
  const status = useQuery({ queryKey: ['status', 'job-system'], queryFn: client.status, refetchInterval: pace });
  const js = status.data?.job_system;
  if (!js || js.state === 'ok') return null;
  return (
    <div className="banner alert" role="status" data-testid="job-system-banner">
      <strong>Job system degraded</strong>
      <span>{js.message ?? 'its storage cannot be reached; it recovers by itself'}</span>
    </div>
  );
}
