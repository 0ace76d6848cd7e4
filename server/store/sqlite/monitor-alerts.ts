// SQLite adapter of AlertsRepo (store/ports/monitor-ports.ts): the monitor_alerts table.
import type { Db } from './db.ts';
import type { Alert } from '../../../contract/app.ts';
import type { AlertsRepo, NewAlert } from '../ports/monitor-ports.ts';
import { ALERT_SELECT, alertFromRow, type AlertRow } from '../rows/monitor-rows.ts';

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
      ? this.db.all<AlertRow>(`${ALERT_SELECT} WHERE a.id > ? AND a.connection_id = ? ORDER BY a.id LIMIT ?`, [sinceId, connectionId, limit])
      : this.db.all<AlertRow>(`${ALERT_SELECT} WHERE a.id > ? ORDER BY a.id LIMIT ?`, [sinceId, limit]);
    return rows.map(alertFromRow);
  }

  firing(connectionId: string): Alert[] {
    return this.db.all<AlertRow>(`${ALERT_SELECT} WHERE a.connection_id = ? AND a.resolved_at IS NULL ORDER BY a.id`, [connectionId]).map(alertFromRow);
  }

  resolve(ids: number[], at: number): void {
    for (const id of ids) this.db.run('UPDATE monitor_alerts SET resolved_at = ? WHERE id = ? AND resolved_at IS NULL', [at, id]);
  }

  trimResolved(keep: number): void {
    this.db.run(
      'DELETE FROM monitor_alerts WHERE resolved_at IS NOT NULL AND id NOT IN (SELECT id FROM monitor_alerts WHERE resolved_at IS NOT NULL ORDER BY resolved_at DESC, id DESC LIMIT ?)',
      [Math.max(0, keep)],
    );
  }

  acknowledge(id: number, at: number): Alert | undefined {
    this.db.run('UPDATE monitor_alerts SET acknowledged_at = ? WHERE id = ? AND acknowledged_at IS NULL', [at, id]);
    const row = this.db.get<AlertRow>(`${ALERT_SELECT} WHERE a.id = ?`, [id]);
    return row && alertFromRow(row);
  }

  board(firing: number, resolved: number): { firing: Alert[]; resolved: Alert[] } {
    return {
      firing: this.db.all<AlertRow>(`${ALERT_SELECT} WHERE a.resolved_at IS NULL ORDER BY a.id LIMIT ?`, [firing]).map(alertFromRow),
      resolved: this.db.all<AlertRow>(`${ALERT_SELECT} WHERE a.resolved_at IS NOT NULL ORDER BY a.resolved_at DESC, a.id DESC LIMIT ?`, [resolved]).map(alertFromRow),
    };
  }

  deleteBefore(at: number): void {
    this.db.run('DELETE FROM monitor_alerts WHERE at < ? AND resolved_at IS NOT NULL', [at]);
  }
}
