// SQLite adapter of AlertsRepo (store/ports/monitor-ports.ts): the monitor_alerts table.
import type { Db } from './db.ts';
import type { Alert } from '../../../contract/app.ts';
import type { AlertsRepo, NewAlert } from '../ports/monitor-ports.ts';
import { alertFromRow, type AlertRow } from '../rows/monitor-rows.ts';

export class SqliteAlerts implements AlertsRepo {
  constructor(private readonly db: Db) {}

  add(a: NewAlert): number {
    return this.db.run('INSERT INTO monitor_alerts (connection_id, kind, queue, value, threshold, at) VALUES (?, ?, ?, ?, ?, ?)', [
      a.connectionId,
      a.kind,
      a.queue,
      a.value,
      a.threshold,
      a.at,
    ]).lastInsertRowid;
  }

  since(sinceId: number, limit: number, connectionId?: string): Alert[] {
    const rows = connectionId
      ? this.db.all<AlertRow>('SELECT * FROM monitor_alerts WHERE id > ? AND connection_id = ? ORDER BY id LIMIT ?', [sinceId, connectionId, limit])
      : this.db.all<AlertRow>('SELECT * FROM monitor_alerts WHERE id > ? ORDER BY id LIMIT ?', [sinceId, limit]);
    return rows.map(alertFromRow);
  }

  deleteBefore(at: number): void {
    this.db.run('DELETE FROM monitor_alerts WHERE at < ?', [at]);
  }
}
