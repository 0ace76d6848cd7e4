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
import type { SharedMonitorStore } from '../ports/monitor-ports.ts';
import { openMonitorSession } from './monitor-session.ts';

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

/**
 * The monitor's store of `serve --database` (monitor/shared-ownership.ts): the pool's repos, and per
 * instance a session of its own (monitor-session.ts) whose writes get repos on that session.
 */
export function pgSharedMonitorStore(pool: Pool, url: string): SharedMonitorStore {
  return {
    ...reposOn(pool),
    openSession: async (opts) => {
      const s = await openMonitorSession(url, opts);
      return {
        get alive() {
          return s.alive;
        },
        claim: (ids) => s.claim(ids),
        release: (id) => s.release(id),
        write: (fn) => s.write((db) => fn(reposOn(db))),
        // Through the pool: the change committed there, and the session may be busy with a sample.
        announce: (id) => s.announce(pool, id),
        close: () => s.close(),
      };
    },
  };
}
