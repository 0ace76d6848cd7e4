// Threshold checks on each sample (alerts stored through AlertsRepo), edge-triggered: a rule records one Alert when a value goes over
// it, and may fire again only after the value has come back under. The "over" state lives in memory,
// so a violation still going on after a restart is reported once more (a reminder, not a flood).
import type { AlertsRepo } from '../store/ports/monitor-ports.ts';
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

export class Alerts {
  /** connection id → keys of the rules currently over their threshold. */
  private readonly over = new Map<string, Set<string>>();

  constructor(private readonly repo: AlertsRepo) {}

  /** Evaluates one sample; returns the alerts it raised. */
  evaluate(connectionId: string, at: number, t: Thresholds, m: CompoundMetrics, failedRate: number | null): Alert[] {
    return this.judge(connectionId, t, m, failedRate).map((a) => {
      const id = this.repo.add({ connectionId, ...a, at });
      return { id, connection_id: connectionId, kind: a.kind, queue: a.queue, value: a.value, threshold: a.threshold, at: new Date(at).toISOString() };
    });
  }

  /** The checks of one sample that went over their threshold since the last; nothing stored. */
  judge(connectionId: string, t: Thresholds, m: CompoundMetrics, failedRate: number | null): Check[] {
    return judgeSample(this.over, connectionId, t, m, failedRate);
  }

  since(sinceId: number, limit = 500, connectionId?: string): Alert[] {
    return this.repo.since(sinceId, limit, connectionId);
  }

  forget(connectionId: string): void {
    this.over.delete(connectionId);
  }

  prune(before: number): void {
    this.repo.deleteBefore(before);
  }
}
