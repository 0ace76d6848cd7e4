// Threshold checks on each good sample, and the alerts' lifecycle they drive. An alert fires when a
// value goes over its rule's threshold and resolves at the first sample where it is back under, or
// where its queue or its rule is gone; a later crossing fires a new alert. Which alerts are firing
// is the store's (not this process's memory), so a restart, or another instance taking the
// connection over, carries on with the same alerts instead of raising them again.
import type { Alert, Thresholds } from '../../contract/app.ts';
import type { CompoundMetrics } from '../../contract/metrics.ts';
import type { NewAlert } from '../store/ports/monitor-ports.ts';
import { andThen, inOrder, type MaybePromise } from '../domain/maybe-promise.ts';

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

/** What one good sample says about a connection's alerts; the store's firing alerts are compared with it. */
export interface AlertJudgement {
  connectionId: string;
  at: number;
  /** The checks over their threshold now. */
  over: Check[];
  /** The rules this sample could not check (a failure rate needs two samples): their alerts stay as they are. */
  unchecked: Kind[];
  /** Resolved alerts kept (the most recent). */
  keepResolved: number;
}

export function judge(connectionId: string, at: number, t: Thresholds, m: CompoundMetrics, failedRate: number | null, keepResolved: number): AlertJudgement {
  const over = checksOf(t, m, failedRate).filter((c) => c.value > c.threshold);
  return { connectionId, at, over, unchecked: failedRate === null ? ['failure_rate'] : [], keepResolved };
}

const keyOf = (a: { kind: Kind; queue: string | null }) => `${a.kind}\u0000${a.queue ?? ''}`;

/** The alerts to fire (over now, none firing for that rule and queue) and those to resolve (firing, no longer over). */
export function planAlerts(firing: Pick<Alert, 'id' | 'kind' | 'queue'>[], j: AlertJudgement): { fire: NewAlert[]; resolve: number[] } {
  const overKeys = new Set(j.over.map(keyOf));
  const firingKeys = new Set(firing.map(keyOf));
  return {
    fire: j.over.filter((c) => !firingKeys.has(keyOf(c))).map((c) => ({ connectionId: j.connectionId, ...c, at: j.at })),
    resolve: firing.filter((a) => !overKeys.has(keyOf(a)) && !j.unchecked.includes(a.kind)).map((a) => a.id),
  };
}

/** Where a judgement is written: the store's alerts inside the sample's transaction (at once on SQLite, later on PostgreSQL). */
export interface AlertWrites {
  firing(connectionId: string): MaybePromise<Pick<Alert, 'id' | 'kind' | 'queue'>[]>;
  add(a: NewAlert): MaybePromise<number>;
  resolve(ids: number[], at: number): MaybePromise<void>;
  trimResolved(keep: number): MaybePromise<void>;
}

export function applyJudgement(w: AlertWrites, j: AlertJudgement): MaybePromise<void> {
  return andThen(w.firing(j.connectionId), (firing) => {
    const plan = planAlerts(firing, j);
    return andThen(inOrder(plan.fire, (a) => w.add(a)), () => {
      if (!plan.resolve.length) return;
      return andThen(w.resolve(plan.resolve, j.at), () => w.trimResolved(j.keepResolved));
    });
  });
}
