// Threshold checks on each sample (the monitor stores the alerts they raise), edge-triggered: a
// rule records one Alert when a value goes over it, and may fire again only after the value has
// come back under. The "over" state lives in memory, so a violation still going on after a restart
// is reported once more (a reminder, not a flood).
import type { Alert, Thresholds } from '../../contract/app.ts';
import type { CompoundMetrics } from '../../contract/metrics.ts';

type Kind = Alert['kind'];

export interface Check {
  kind: Kind;
  queue: string | null;
  value: number;
  threshold: number;
}

export function checksOf(t: Thresholds, m: CompoundMetrics, failedRate: number | null): Check[] {
  const out: Check[] = [];
  const perQueue = Object.keys(t.queues).length > 0;
  if (!perQueue && !t.default && t.failure_rate === undefined) return out;
  for (const [queue, q] of perQueue || t.default ? Object.entries(m.queues) : []) {
    const rule = t.queues[queue] ?? t.default;
    if (!rule) continue;
    if (rule.latency !== undefined) out.push({ kind: 'latency', queue, value: q.latency, threshold: rule.latency });
    if (rule.backlog !== undefined) out.push({ kind: 'backlog', queue, value: q.backlog, threshold: rule.backlog });
  }
  if (t.failure_rate !== undefined && failedRate !== null) {
    out.push({ kind: 'failure_rate', queue: null, value: failedRate, threshold: t.failure_rate });
  }
  return out;
}

/** Edge-triggered: `over` holds, per connection, the rules over their threshold at the last sample. */
export function judgeSample(over: Map<string, Set<string>>, connectionId: string, t: Thresholds, m: CompoundMetrics, failedRate: number | null): Check[] {
  const state = over.get(connectionId) ?? new Set<string>();
  const now = new Set<string>();
  const raised: Check[] = [];
  for (const c of checksOf(t, m, failedRate)) {
    if (!(c.value > c.threshold)) continue;
    const key = `${c.kind}\u0000${c.queue ?? ''}\u0000${c.threshold}`;
    now.add(key);
    if (!state.has(key)) raised.push(c);
  }
  // A failure-rate rule is only checked when a rate exists; keep its state across rate-less samples.
  for (const key of state) if (key.startsWith('failure_rate\u0000') && failedRate === null) now.add(key);
  over.set(connectionId, now);
  return raised;
}
