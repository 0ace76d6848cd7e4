// The last minutes of a connection's backlog history, which queue trends are fitted to: a query of
// its own, fine-grained whatever range the dashboard shows.
import { useQuery } from '@tanstack/react-query';
import type { History } from '../api/client.ts';
import { TREND_WINDOW_MS } from '../components/queue-trend.ts';
import { useClient } from './client-context.tsx';
import { usePace } from './pace.tsx';

/** One bucket a second at most: the history keeps raw samples for hours. */
const POINTS = TREND_WINDOW_MS / 1000 + 1;

export function useTrendHistory(connectionId: string, opts: { queue?: string; pausedAt?: number | null } = {}): History | undefined {
  const client = useClient();
  const { queue, pausedAt = null } = opts;
  const pace = usePace(5000);
  const q = useQuery({
    queryKey: ['trend', connectionId, queue ?? null, pausedAt],
    queryFn: () => {
      const to = pausedAt ?? Date.now();
      return client.history(connectionId, { from: to - TREND_WINDOW_MS, to, points: POINTS, ...(queue ? { queues: queue } : { top: 500 }) });
    },
    refetchInterval: pausedAt === null ? pace : false,
    placeholderData: (prev) => prev,
  });
  return q.data;
}
