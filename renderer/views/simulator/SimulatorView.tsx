// The Simulator view: start a fleet of virtual runners from a form or a scenario,
// watch each runner's state, the fleet's throughput and every exchange in the journal.
import { useEffect } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { sim, type FleetStatus, type StartFleet } from '../../api/simulator.ts';
import { FleetSetup } from './FleetSetup.tsx';
import { FleetSummary } from './FleetSummary.tsx';
import { RunnersTable } from './RunnersTable.tsx';
import { ThroughputCharts } from './ThroughputCharts.tsx';
import { JournalPanel } from './JournalPanel.tsx';
import './simulator.css';
import { usePaceOverride } from '../../app/pace.tsx';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Build ids link to the Builds view only when the fleet runs against this very server. */
function isThisServer(target: string, self: string): boolean {
  try {
    const a = new URL(target);
    const b = new URL(self);
    return a.port === b.port && (a.hostname === b.hostname || (LOOPBACK.has(a.hostname) && LOOPBACK.has(b.hostname)));
  } catch {
    return false;
  }
}

const STATE_BADGE: Record<FleetStatus['state'], string> = { idle: '', running: 'status-running', stopping: 'status-pending', finished: 'status-success' };

export default function SimulatorView() {
  const client = useClient();
  const qc = useQueryClient();
  const pace = usePaceOverride();
  const fleet = useQuery({
    queryKey: ['sim', 'fleet'],
    queryFn: () => sim.fleet(client),
    refetchInterval: (q) => (q.state.data?.state === 'running' || q.state.data?.state === 'stopping' ? (pace ?? 1000) : (pace ?? 5000)),
  });
  const refresh = (s: FleetStatus) => {
    qc.setQueryData(['sim', 'fleet'], s);
    void qc.invalidateQueries({ queryKey: ['sim', 'throughput'] });
    void qc.invalidateQueries({ queryKey: ['builds'] });
  };
  const start = useMutation({ mutationFn: (body: StartFleet) => sim.start(client, body), onSuccess: refresh });
  const stop = useMutation({ mutationFn: () => sim.stop(client), onSuccess: refresh });

  const s = fleet.data;
  // The charts poll slowly once the fleet is done: fetch its last numbers at once.
  const fleetState = s?.state;
  useEffect(() => {
    void qc.invalidateQueries({ queryKey: ['sim', 'throughput'] });
  }, [fleetState, qc]);
  const running = s?.state === 'running' || s?.state === 'stopping';
  const error = start.error ?? stop.error ?? fleet.error;

  return (
    <section className="view" data-testid="view-simulator">
      <div className="toolbar">
        <h2>Simulator</h2>
        {s && <span className={`badge ${STATE_BADGE[s.state]}`} data-testid="fleet-state">{s.state}</span>}
        {s && <span className="muted small" data-testid="fleet-message">{s.message}{s.target ? ` — target ${s.target}` : ''}{s.seed !== null ? `, seed ${s.seed}` : ''}</span>}
      </div>
      <FleetSetup busy={start.isPending || stop.isPending} running={running} onStart={(b) => start.mutate(b)} onStop={() => stop.mutate()} />
      {error && <p className="error" role="alert" data-testid="fleet-error">{(error as Error).message}</p>}
      {s && <FleetSummary s={s} />}
      <RunnersTable runners={s?.runners ?? []} linkBuilds={!s?.target || isThisServer(s.target, client.baseUrl || window.location.origin)} />
      <ThroughputCharts live={running} />
      <JournalPanel runnerNames={(s?.runners ?? []).map((r) => r.name)} live={running} />
    </section>
  );
}
