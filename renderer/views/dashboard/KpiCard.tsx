// One dashboard card: a glossary-linked label, the value, and an optional line under it.
import type { ReactNode } from 'react';
import { Glossary, type Term } from '../../components/glossary.tsx';

export function KpiCard({ term, label, value, sub, testId, subClassName = 'kpi-sub muted small' }: { term: Term; label: string; value: string; sub?: ReactNode; testId: string; subClassName?: string }) {
  return (
    <div className="kpi card" data-testid={testId}>
      <div className="kpi-label"><Glossary term={term}>{label}</Glossary></div>
      <div className="kpi-value" data-testid={`${testId}-value`}>{value}</div>
      {sub && <div className={subClassName}>{sub}</div>}
    </div>
  );
}
