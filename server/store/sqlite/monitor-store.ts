// The monitor's SQLite adapters as one MonitorStore (store/ports/monitor-ports.ts), on the store's database.
import type { Db } from './db.ts';
import type { MonitorStore } from '../ports/monitor-ports.ts';
import { SqliteConnections } from './monitor-connections.ts';
import { SqliteAlerts } from './monitor-alerts.ts';
import { SqliteMonitorHistory } from './monitor-history.ts';

export function sqliteMonitorStore(db: Db): MonitorStore {
  return {
    connections: new SqliteConnections(db),
    alerts: new SqliteAlerts(db),
    history: new SqliteMonitorHistory(db),
    tx: (fn) => db.tx(fn),
  };
}
