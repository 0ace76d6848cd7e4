// Throughput of the fleet over the last minutes: builds finished per minute, trace bytes per second.
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { sim } from '../../api/simulator.ts';
import { PALETTE, TimeSeriesChart } from '../../components/TimeSeriesChart.tsx';
import { bytes } from './bytes.ts';

const MINUTES = 5;

export function ThroughputCharts({ live }: { live: boolean }) {
  const client = useClient();
  const q = useQuery({ queryKey: ['sim', 'throughput'], queryFn: () => sim.throughput(client, { minutes: MINUTES }), refetchInterval: live ? 2000 : 10_000 });
  const d = q.data;
  const now = Date.now();
  const t = d?.t ?? [];
  const from = t[0] ?? now - MINUTES * 60_000;
  const to = t.length ? t[t.length - 1]! + (d?.step_s ?? 1) * 1000 : now;
  return (
    <div className="charts">
      <div className="card">
        <h3>Builds per minute</h3>
        <TimeSeriesChart testId="chart-builds-per-min" t={t} from={from} to={to} height={180}
          series={[{ name: 'builds/min', values: d?.builds_per_min ?? [], color: PALETTE[2]!, kind: 'area' }]} yFormat={(v) => v.toFixed(v < 10 ? 1 : 0)} />
      </div>
      <div className="card">
        <h3>Trace bytes per second</h3>
        <TimeSeriesChart testId="chart-trace-rate" t={t} from={from} to={to} height={180}
          series={[{ name: 'trace bytes/s', values: d?.trace_bytes_per_s ?? [], color: PALETTE[0]!, kind: 'area' }]} yFormat={(v) => bytes(Math.round(v))} />
      </div>
      {q.error && <p className="error">{(q.error as Error).message}</p>}
    </div>
  );
}
