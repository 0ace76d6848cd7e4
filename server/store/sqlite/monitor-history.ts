// SQLite adapter of MonitorHistoryRepo (store/ports/monitor-ports.ts): monitor_samples (raw and rollup rows)
// and monitor_queue_names. The in-memory columns built from these live in server/monitor/.
import type { Db } from './db.ts';
import type { MonitorHistoryRepo, SampleRow } from '../ports/monitor-ports.ts';

export class SqliteMonitorHistory implements MonitorHistoryRepo {
  constructor(private readonly db: Db) {}

  queueNames(connectionId: string): Iterable<{ idx: number; name: string }> {
    return this.db.iterate<{ idx: number; name: string }>('SELECT idx, name FROM monitor_queue_names WHERE connection_id = ? ORDER BY idx', [connectionId]);
  }

  setQueueName(connectionId: string, idx: number, name: string): void {
    this.db.run('INSERT OR REPLACE INTO monitor_queue_names (connection_id, idx, name) VALUES (?, ?, ?)', [connectionId, idx, name]);
  }

  samples(connectionId: string): Iterable<SampleRow> {
    return this.db.iterate<SampleRow>('SELECT tier, t, error, data FROM monitor_samples WHERE connection_id = ? ORDER BY tier, t', [connectionId]);
  }

  putSample(connectionId: string, row: SampleRow): void {
    this.db.run('INSERT OR REPLACE INTO monitor_samples (connection_id, tier, t, error, data) VALUES (?, ?, ?, ?, ?)', [
      connectionId,
      row.tier,
      row.t,
      row.error,
      row.data,
    ]);
  }

  deleteBefore(connectionId: string, tier: number, t: number): void {
    this.db.run('DELETE FROM monitor_samples WHERE connection_id = ? AND tier = ? AND t < ?', [connectionId, tier, t]);
  }
}
