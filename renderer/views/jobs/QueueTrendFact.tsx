// A queue's backlog trend on its own page, fitted to the connection's recent history as in the
// dashboard's queues table.
import { useTrendHistory } from '../../app/queue-trends.ts';
import { backlogTrend, slopePerMinute, trendText } from '../../components/queue-trend.ts';

export function QueueTrendFact({ connectionId, name, backlog }: { connectionId: string; name: string; backlog: number | undefined }) {
  const h = useTrendHistory(connectionId, { queue: name });
  const values = h?.queues[name]?.backlog ?? [];
  // The page's own size when it has one; else the history's latest, which the slope is fitted to.
  const latest = backlog ?? [...values].reverse().find((v) => v !== null) ?? 0;
  return (
    <>
      <dt>Trend (5 min)</dt>
      <dd data-testid="queue-trend">{h ? trendText(backlogTrend(slopePerMinute(h.t, values), latest)) : '—'}</dd>
    </>
  );
}
