// SQLite adapter of AlertsRepo (store/monitor-ports.ts): the monitor_alerts table.
import type { Db } from './db.ts';
import { isoTimeOr0, storedInt } from './row-values.ts';
import type { Alert } from '../contract/app.ts';
import type { AlertsRepo, NewAlert } from './monitor-ports.ts';

/** A monitor_alerts row as either store hands it over (PostgreSQL's bigint id comes as text). */
export interface AlertRow {
  id: number | string;
  connection_id: string;
  kind: string;
  queue: string | null;
  value: number;
  threshold: number;
  at: number;
}

export const alertFromRow = (r: AlertRow): Alert => ({
  id: storedInt(r.id) ?? 0,
  connection_id: r.connection_id,
  kind: r.kind as Alert['kind'],
  queue: r.queue,
  value: r.value,
  threshold: r.threshold,
  at: isoTimeOr0(r.at),
});

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
