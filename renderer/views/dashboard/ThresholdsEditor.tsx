// Alert thresholds of one connection: a default rule, per-queue rules (latency in seconds, backlog
// in jobs) and a failure rate (failed jobs/s). The backend evaluates them on every sample.
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Thresholds } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';
import { Glossary } from '../../components/glossary.tsx';

interface RuleRow {
  queue: string;
  latency: string;
  backlog: string;
}

const toNum = (s: string) => (s.trim() === '' ? undefined : Number(s));

export function ThresholdsEditor({ connectionId, thresholds, queueNames }: { connectionId: string; thresholds: Thresholds | undefined; queueNames: string[] }) {
  const client = useClient();
  const qc = useQueryClient();
  const [rows, setRows] = useState<RuleRow[]>([]);
  const [def, setDef] = useState({ latency: '', backlog: '' });
  const [failureRate, setFailureRate] = useState('');
  const [message, setMessage] = useState<string | null>(null);

  // The form is reloaded from each new thresholds answer (after a save, or another connection's),
  // while rendering rather than from an effect, so no frame shows the old values.
  const [loadedFrom, setLoadedFrom] = useState<Thresholds | undefined>(undefined);
  if (thresholds && thresholds !== loadedFrom) {
    setLoadedFrom(thresholds);
    setRows(Object.entries(thresholds.queues).map(([queue, r]) => ({ queue, latency: r.latency?.toString() ?? '', backlog: r.backlog?.toString() ?? '' })));
    setDef({ latency: thresholds.default?.latency?.toString() ?? '', backlog: thresholds.default?.backlog?.toString() ?? '' });
    setFailureRate(thresholds.failure_rate?.toString() ?? '');
  }

  const save = useMutation({
    mutationFn: (t: Thresholds) => client.putThresholds(connectionId, t),
    onSuccess: () => {
      setMessage('Saved. They apply from the next sample on.');
      void qc.invalidateQueries({ queryKey: ['thresholds', connectionId] });
    },
    onError: (e) => setMessage((e as Error).message),
  });

  function submit() {
    const bad = [...rows.flatMap((r) => [r.latency, r.backlog]), def.latency, def.backlog, failureRate].find((v) => v.trim() !== '' && !(Number(v) >= 0));
    if (bad !== undefined) return setMessage(`"${bad}" is not a number ≥ 0.`);
    const queues: Thresholds['queues'] = {};
    for (const r of rows) {
      if (!r.queue.trim()) continue;
      const rule = { latency: toNum(r.latency), backlog: toNum(r.backlog) };
      if (rule.latency !== undefined || rule.backlog !== undefined) queues[r.queue.trim()] = rule;
    }
    const d = { latency: toNum(def.latency), backlog: toNum(def.backlog) };
    save.mutate({
      queues,
      ...(d.latency !== undefined || d.backlog !== undefined ? { default: d } : {}),
      ...(toNum(failureRate) !== undefined ? { failure_rate: toNum(failureRate) } : {}),
    });
  }

  return (
    <section className="card" aria-labelledby="thr-h" data-testid="thresholds-editor">
      <div className="card-head"><h3 id="thr-h">Thresholds</h3></div>
      <datalist id="queue-names">{queueNames.map((q) => <option key={q} value={q} />)}</datalist>
      <div className="thr-grid">
        <span className="muted small">Queue</span>
        <span className="muted small"><Glossary term="latency">Latency (s)</Glossary></span>
        <span className="muted small"><Glossary term="backlog">Backlog</Glossary></span>
        <span />
        <span>Every other queue</span>
        <input aria-label="Default latency threshold, seconds" inputMode="decimal" value={def.latency} onChange={(e) => setDef({ ...def, latency: e.target.value })} data-testid="thr-default-latency" />
        <input aria-label="Default backlog threshold" inputMode="numeric" value={def.backlog} onChange={(e) => setDef({ ...def, backlog: e.target.value })} data-testid="thr-default-backlog" />
        <span />
        {rows.map((r, i) => (
          <RuleInputs key={i} row={r} onChange={(n) => setRows(rows.map((x, j) => (j === i ? n : x)))} onRemove={() => setRows(rows.filter((_, j) => j !== i))} />
        ))}
      </div>
      <div className="row gap">
        <button className="ghost" onClick={() => setRows([...rows, { queue: '', latency: '', backlog: '' }])} data-testid="thr-add">Add queue rule</button>
        <label className="inline">
          <Glossary term="failure_rate">Failure rate (failed/s)</Glossary>
          <input aria-label="Failure rate threshold, failed jobs per second" inputMode="decimal" value={failureRate} onChange={(e) => setFailureRate(e.target.value)} data-testid="thr-failure-rate" />
        </label>
        <span className="spacer" />
        <button onClick={submit} disabled={save.isPending} data-testid="thr-save">Save thresholds</button>
      </div>
      {message && <p className="small" role="status" data-testid="thr-message">{message}</p>}
    </section>
  );
}

function RuleInputs({ row, onChange, onRemove }: { row: RuleRow; onChange: (r: RuleRow) => void; onRemove: () => void }) {
  return (
    <>
      <input list="queue-names" aria-label="Queue name" value={row.queue} onChange={(e) => onChange({ ...row, queue: e.target.value })} data-testid="thr-queue" />
      <input aria-label={`Latency threshold for ${row.queue || 'this queue'}, seconds`} inputMode="decimal" value={row.latency} onChange={(e) => onChange({ ...row, latency: e.target.value })} data-testid="thr-latency" />
      <input aria-label={`Backlog threshold for ${row.queue || 'this queue'}`} inputMode="numeric" value={row.backlog} onChange={(e) => onChange({ ...row, backlog: e.target.value })} data-testid="thr-backlog" />
      <button className="ghost icon" onClick={onRemove} aria-label={`Remove rule for ${row.queue || 'this queue'}`}>✕</button>
    </>
  );
}
