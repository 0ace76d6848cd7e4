// Monitor alerts on PostgreSQL: AlertsRepo of store/ports/monitor-ports.ts, asynchronous, with the
// semantics of store/sqlite/monitor-alerts.ts. Ids come from an identity column: they grow across
// instances, which is what clients polling with `since` need.
import type { Alert } from '../../../contract/app.ts';
import type { NewAlert } from '../ports/monitor-ports.ts';
import { ALERT_SELECT, alertFromRow, type AlertRow } from '../rows/monitor-rows.ts';
import type { Queryable } from './connect.ts';
import type { AlertsRepoAsync } from '../ports/async-ports.ts';
import { pgText } from './nul-free-text.ts';

// A bigint parameter must be an integer (pg throws on 1.5, where SQLite compares): bounds are
// rounded the way that keeps the comparison with integer columns the same.
const safe = (n: number) => Math.min(Math.max(n, Number.MIN_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);

/** What adding an alert of a connection that does not exist throws (as the SQLite adapter's foreign-key failure). */
export class AlertConnectionMissingError extends Error {
  constructor(connectionId: string) {
    super(`FOREIGN KEY constraint failed: monitor connection ${JSON.stringify(connectionId)} does not exist`);
    this.name = 'AlertConnectionMissingError';
  }
}

export class PgAlerts implements AlertsRepoAsync {
  constructor(private readonly db: Queryable) {}

  /**
   * Inserted from a SELECT that yields nothing for a connection that does not exist (removed while
   * its sample was judged), rather than letting the foreign key refuse it: a refused INSERT has drawn
   * its id, and ids would run ahead of SQLite's, which draws none. The queue name comes from the
   * remote server: see text.ts for what happens to a U+0000 in it.
   */
  async add(a: NewAlert): Promise<number> {
    const { rows } = await this.db.query<{ id: number }>(
      `INSERT INTO monitor_alerts (connection_id, kind, queue, value, threshold, at)
       SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM monitor_connections WHERE id = $1)
       RETURNING id`,
      [a.connectionId, a.kind, pgText(a.queue), a.value, a.threshold, a.at],
    );
    if (!rows.length) throw new AlertConnectionMissingError(a.connectionId);
    return rows[0]!.id;
  }

  /**
   * add() inside a transaction whose commit gives out ids in order: clients poll with `since` (the
   * highest id they saw), so an alert must never commit after one with a higher id, or they skip it.
   * One server commits its samples one by one; several instances draw ids from the one identity and
   * commit when they do. The lock (held to COMMIT) makes draw order commit order, across instances.
   * It is taken only by samples that raise an alert, so the serialisation costs next to nothing.
   */
  async addInCommitOrder(a: NewAlert): Promise<number> {
    await this.db.query(`SELECT pg_advisory_xact_lock(hashtext('jobscope-monitor-alerts'), 0)`);
    return this.add(a);
  }

  /** Alerts with an id above `sinceId`, oldest first; a negative `limit` is no limit, as SQLite's LIMIT -1. */
  async since(sinceId: number, limit: number, connectionId?: string): Promise<Alert[]> {
    if (Number.isNaN(sinceId)) return [];
    const after = safe(Math.floor(sinceId));
    const max = limit < 0 ? null : limit;
    const { rows } = connectionId
      ? await this.db.query<AlertRow>(`${ALERT_SELECT} WHERE a.id > $1 AND a.connection_id = $2 ORDER BY a.id LIMIT $3`, [after, connectionId, max])
      : await this.db.query<AlertRow>(`${ALERT_SELECT} WHERE a.id > $1 ORDER BY a.id LIMIT $2`, [after, max]);
    return rows.map(alertFromRow);
  }

  async firing(connectionId: string): Promise<Alert[]> {
    const { rows } = await this.db.query<AlertRow>(`${ALERT_SELECT} WHERE a.connection_id = $1 AND a.resolved_at IS NULL ORDER BY a.id`, [connectionId]);
    return rows.map(alertFromRow);
  }

  async resolve(ids: number[], at: number): Promise<void> {
    if (!ids.length) return;
    await this.db.query('UPDATE monitor_alerts SET resolved_at = $1 WHERE id = ANY($2::bigint[]) AND resolved_at IS NULL', [safe(Math.floor(at)), ids]);
  }

  async trimResolved(keep: number): Promise<void> {
    await this.db.query(
      `DELETE FROM monitor_alerts WHERE resolved_at IS NOT NULL AND id NOT IN
       (SELECT id FROM monitor_alerts WHERE resolved_at IS NOT NULL ORDER BY resolved_at DESC, id DESC LIMIT $1)`,
      [Math.max(0, Math.floor(keep))],
    );
  }

  async acknowledge(id: number, at: number): Promise<Alert | undefined> {
    if (!Number.isSafeInteger(id)) return undefined;
    await this.db.query('UPDATE monitor_alerts SET acknowledged_at = $1 WHERE id = $2 AND acknowledged_at IS NULL', [safe(Math.floor(at)), id]);
    const { rows } = await this.db.query<AlertRow>(`${ALERT_SELECT} WHERE a.id = $1`, [id]);
    return rows[0] && alertFromRow(rows[0]);
  }

  async board(firing: number, resolved: number): Promise<{ firing: Alert[]; resolved: Alert[] }> {
    const now = await this.db.query<AlertRow>(`${ALERT_SELECT} WHERE a.resolved_at IS NULL ORDER BY a.id LIMIT $1`, [firing]);
    const past = await this.db.query<AlertRow>(`${ALERT_SELECT} WHERE a.resolved_at IS NOT NULL ORDER BY a.resolved_at DESC, a.id DESC LIMIT $1`, [resolved]);
    return { firing: now.rows.map(alertFromRow), resolved: past.rows.map(alertFromRow) };
  }

  /** Resolved alerts only: a firing one stays however old (as SQLite's). */
  async deleteBefore(at: number): Promise<void> {
    if (Number.isNaN(at)) return;
    await this.db.query('DELETE FROM monitor_alerts WHERE at < $1 AND resolved_at IS NOT NULL', [safe(Math.ceil(at))]);
  }
}
