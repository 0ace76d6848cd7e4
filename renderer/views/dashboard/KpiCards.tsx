// The headline numbers of the latest sample, with rates from the history's counter deltas.
import type { CurrentSample, History } from '../../api/client.ts';
import { Glossary } from '../../components/glossary.tsx';
import { num, rate } from '../../components/format.ts';
import { SetCards } from './SetCards.tsx';
import { capacityOf } from '../../../common/capacity.ts';
import { KpiCard } from './KpiCard.tsx';

function lastValue(s: (number | null)[] | undefined): number | null {
  if (!s) return null;
  for (let i = s.length - 1; i >= 0; i--) if (s[i] !== null && s[i] !== undefined) return s[i]!;
  return null;
}

export function KpiCards({ current, history }: { current: CurrentSample | null | undefined; history: History | undefined }) {
  const load = current ? capacityOf(current) : null;
  const busy = load?.busy ?? null;
  const conc = load?.concurrency ?? null;
  const util = busy !== null && conc ? Math.round((busy / conc) * 100) : null;
  return (
    <div className="kpis">
      <KpiCard term="processed" label="Processed" testId="kpi-processed" value={num(current?.jobs.processed)} sub={<>{rate(lastValue(history?.totals.processed_rate))} processed</>} />
      <KpiCard term="failed" label="Failed" testId="kpi-failed" value={num(current?.jobs.failed)} sub={<>{rate(lastValue(history?.totals.failed_rate))} failed</>} />
      <KpiCard term="enqueued" label="Enqueued" testId="kpi-enqueued" value={num(current?.jobs.enqueued)} />
      <KpiCard
        term="busy"
        label="Busy / concurrency"
        testId="kpi-busy"
        value={busy === null ? '—' : `${num(busy)} / ${num(conc)}`}
        sub={
          <>
            <Glossary term="utilization"><span data-testid="kpi-utilization">{util === null ? '—' : `${util}%`}</span> utilization</Glossary>
            {load?.quiet ? <span data-testid="kpi-quiet">, {num(load.quiet)} quiet left out</span> : null}
          </>
        }
      />
      <KpiCard term="processes" label="Processes" testId="kpi-processes" value={num(current?.processes.length)} />
      <SetCards current={current} history={history} />
    </div>
  );
}
