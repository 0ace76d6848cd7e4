// The watched Redis itself: version, memory, clients, uptime. Asked for once when the page opens
// (and on Refresh here), never with every sample: INFO is cheap, but nobody needs it each second.
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { humanDuration, num } from '../../components/format.ts';

const MIB = 2 ** 20;
const mib = (b: number | null) => (b === null ? '—' : `${(b / MIB).toFixed(1)} MiB`);

export function RedisFactsCard({ connectionId }: { connectionId: string }) {
  const client = useClient();
  const facts = useQuery({ queryKey: ['redis-facts', connectionId], queryFn: () => client.redisFacts(connectionId), staleTime: Infinity, refetchOnWindowFocus: false });
  const f = facts.data;
  return (
    <section className="card" aria-labelledby="redis-facts-h" data-testid="redis-facts">
      <div className="card-head">
        <h3 id="redis-facts-h">Redis</h3>
        <button className="ghost small" onClick={() => void facts.refetch()} data-testid="redis-facts-refresh">↻ Read again</button>
      </div>
      {facts.error ? (
        <p className="muted" data-testid="redis-facts-error">Could not read the Redis: {(facts.error as Error).message}</p>
      ) : f?.refused ? (
        <p className="muted" data-testid="redis-facts-refused">This Redis user may not run INFO, so its version, memory and clients are not shown ({f.refused}).</p>
      ) : (
        <dl className="facts">
          <dt>Version</dt><dd data-testid="redis-version">{f?.version ?? '—'}</dd>
          <dt>Memory used</dt><dd data-testid="redis-memory">{mib(f?.used_memory ?? null)}</dd>
          <dt>Memory peak</dt><dd data-testid="redis-memory-peak">{mib(f?.used_memory_peak ?? null)}</dd>
          <dt>Connected clients</dt><dd data-testid="redis-clients">{num(f?.connected_clients)}</dd>
          <dt>Uptime</dt><dd data-testid="redis-uptime">{f?.uptime_s == null ? '—' : humanDuration(f.uptime_s)}</dd>
        </dl>
      )}
    </section>
  );
}
