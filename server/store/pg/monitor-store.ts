// The monitor's PostgreSQL adapters as one store, as store/sqlite/monitor-store.ts makes the SQLite ones.
// tx() differs from MonitorStore's: PostgreSQL's transaction lives on one connection, so `fn` is
// handed repos bound to that connection and may await; its writes commit together or not at all
// (a sample's rows, its queue names and the connection's health, as the monitor records them).
import type { Pool } from 'pg';
import { PgConnections } from './monitor-connections.ts';
import { PgAlerts } from './monitor-alerts.ts';
import { PgMonitorHistory } from './monitor-history.ts';
import { inTransaction } from './transaction.ts';
import type { Queryable } from './connect.ts';

export interface PgMonitorRepos {
  connections: PgConnections;
  alerts: PgAlerts;
  history: PgMonitorHistory;
}

export interface PgMonitorStore extends PgMonitorRepos {
  /** Runs `fn` in one transaction with repos on its connection; a throw rolls all of it back. */
  tx<T>(fn: (repos: PgMonitorRepos) => Promise<T>): Promise<T>;
}

/** The repos on one connection: the pool, a transaction's client, or the monitor's session (monitor-session.ts). */
export const reposOn = (db: Queryable): PgMonitorRepos => ({ connections: new PgConnections(db), alerts: new PgAlerts(db), history: new PgMonitorHistory(db) });

export function pgMonitorStore(pool: Pool): PgMonitorStore {
  return { ...reposOn(pool), tx: (fn) => inTransaction(pool, 'BEGIN', (client) => fn(reposOn(client))) };
}
