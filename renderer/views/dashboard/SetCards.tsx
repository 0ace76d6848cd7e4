// Sidekiq's Retries, Scheduled and Dead sizes: a sidekiq connection's samples and the embedded job
// system's have them, so on call one sees at a glance whether failures pile up without opening Sidekiq Web.
import type { CurrentSample, History } from '../../api/client.ts';
import type { Term } from '../../components/glossary.tsx';
import { num } from '../../components/format.ts';
import { Sparkline } from '../../components/Sparkline.tsx';
import { KpiCard } from './KpiCard.tsx';

const SETS = [
  { key: 'retry', term: 'retries', label: 'Retries' },
  { key: 'scheduled', term: 'scheduled', label: 'Scheduled' },
  { key: 'dead', term: 'dead', label: 'Dead' },
] as const satisfies readonly { key: keyof NonNullable<History['sets']>; term: Term; label: string }[];

export function SetCards({ current, history }: { current: CurrentSample | null | undefined; history: History | undefined }) {
  const extras = current?.sidekiq ?? current?.sets;
  if (!extras) return null;
  const now = { retry: extras.retry_size, scheduled: extras.scheduled_size, dead: extras.dead_size };
  return (
    <>
      {SETS.map((s) => (
        <KpiCard key={s.key} term={s.term} label={s.label} testId={`kpi-${s.key}`} value={num(now[s.key])} subClassName="kpi-sub" sub={<Sparkline values={history?.sets?.[s.key]} />} />
      ))}
    </>
  );
}
