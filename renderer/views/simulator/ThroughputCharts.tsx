// Throughput of the fleet over the last minutes: builds finished per minute, trace bytes per second.
import { useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useClient } from '../../app/client-context.tsx';
import { sim } from '../../api/simulator.ts';
import { PALETTE, TimeSeriesChart, type Series } from '../../components/TimeSeriesChart.tsx';
import { bytes } from './bytes.ts';
import { decimal } from '../../components/format.ts';
import { usePace } from '../../app/pace.tsx';

const MINUTES = 5;
// Module-level, so the memoized charts get the same function on every render.
const perMinute = (v: number) => decimal(v, v < 10 ? 1 : 0);
const perSecond = (v: number) => bytes(Math.round(v));
const NO_VALUES: (number | null)[] = [];
const NO_TIMES: number[] = [];

export function ThroughputCharts({ live }: { live: boolean }) {
  const client = useClient();
  const q = useQuery({ queryKey: ['sim', 'throughput'], queryFn: () => sim.throughput(client, { minutes: MINUTES }), refetchInterval: usePace(live ? 2000 : 10_000) });
  const d = q.data;
  // Where the charts end before the first answer (render must not read the clock).
  const [openedAt] = useState(() => Date.now());
  const t = d?.t ?? NO_TIMES;
  const from = t[0] ?? openedAt - MINUTES * 60_000;
  const to = t.length ? t[t.length - 1]! + (d?.step_s ?? 1) * 1000 : openedAt;
  const builds = useMemo<Series[]>(() => [{ name: 'builds/min', values: d?.builds_per_min ?? NO_VALUES, color: PALETTE[2]!, kind: 'area' }], [d]);
  const trace = useMemo<Series[]>(() => [{ name: 'trace bytes/s', values: d?.trace_bytes_per_s ?? NO_VALUES, color: PALETTE[0]!, kind: 'area' }], [d]);
  return (
    <div className="charts">
      <div className="card">
        <h3>Builds per minute</h3>
        <TimeSeriesChart testId="chart-builds-per-min" t={t} from={from} to={to} height={180}
          series={builds} yFormat={perMinute} />
      </div>
      <div className="card">
        <h3>Trace bytes per second</h3>
        <TimeSeriesChart testId="chart-trace-rate" t={t} from={from} to={to} height={180}
          series={trace} axis="bytes" yFormat={perSecond} />
      </div>
      {q.error && <p className="error">{(q.error as Error).message}</p>}
    </div>
  );
}
