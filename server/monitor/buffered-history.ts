// ConnectionHistory writes synchronously inside store.tx (SQLite's way: a sample's rows in one
// transaction, no await inside). On PostgreSQL the writes must be awaited, so the shared ownership
// hands ConnectionHistory this store instead: writes are kept as a list, and it then sends them in
// one transaction of its session (shared-ownership.ts) with the connection's health and the alerts.
// If that transaction fails, memory is ahead of the database: the monitor drops the history and
// loads it again from the rows.
import type { MonitorHistoryRepo, MonitorStore, SampleRow, SessionRepos } from '../store/ports/monitor-ports.ts';

export type HistoryOp =
  | { op: 'name'; idx: number; name: string }
  | { op: 'put'; row: SampleRow }
  | { op: 'delete'; tier: number; t: number };

export class BufferedHistory implements Pick<MonitorStore, 'history' | 'tx'> {
  private ops: HistoryOp[] = [];
  readonly history: MonitorHistoryRepo;

  /** `names` and `rows` are what load() reads (fetched before, as PostgreSQL answers later). */
  constructor(stored: { names: { idx: number; name: string }[]; rows: SampleRow[] } = { names: [], rows: [] }) {
    this.history = {
      // Handed over once (load() reads each once), so the rows are not held twice for good.
      queueNames: () => stored.names.splice(0),
      samples: () => stored.rows.splice(0),
      setQueueName: (_id, idx, name) => void this.ops.push({ op: 'name', idx, name }),
      putSample: (_id, row) => void this.ops.push({ op: 'put', row }),
      deleteBefore: (_id, tier, t) => void this.ops.push({ op: 'delete', tier, t }),
    };
  }

  tx<T>(fn: () => T): T {
    return fn();
  }

  /** The writes since the last take, in order. */
  take(): HistoryOp[] {
    const out = this.ops;
    this.ops = [];
    return out;
  }
}

export async function applyOps(repo: SessionRepos['history'], connectionId: string, ops: HistoryOp[]): Promise<void> {
  for (const o of ops) {
    if (o.op === 'name') await repo.setQueueName(connectionId, o.idx, o.name);
    else if (o.op === 'put') await repo.putSample(connectionId, o.row);
    else await repo.deleteBefore(connectionId, o.tier, o.t);
  }
}
