// The PostgreSQL store (several `jobscope serve` instances sharing one database and one
// data folder): its parts, each tested on a real cluster (test/store/pg-*.test.ts). Connecting
// (connect.ts), the schema and its migrations under an advisory lock (migrations.ts, migrate.ts),
// errors that say what to do (errors.ts), dispatch with FOR UPDATE SKIP LOCKED in GitLab's fair order
// (take.ts), trace appends whose length in the database is the truth, one writer per build at a time
// across instances (traces.ts), changes heard across instances with LISTEN/NOTIFY (notify.ts), and
// async adapters of the builds, runners, projects, users and secrets ports (ports/async-ports.ts), checked
// against the SQLite ones step by step (test/store/pg-adapters.test.ts, pg-builds.test.ts).
//
// The domain runs on these through backend.ts (ports and the strategies that differ from SQLite's),
// opened by open-backend.ts; handlers await its answers (server/domain/maybe-promise.ts):
// buildServer's internal `database` option runs the runner API on it (test/api/backends.ts runs the runner API suite on both stores;
// test/store/pg-server-*.test.ts runs two instances on one database).
//
// `serve --database` (config.ts) passes buildServer's `database` option. In that mode the
// builds, runners, projects, users (also the admin API's tokens), the monitor (monitor/shared-ownership.ts
// on pgSharedMonitorStore: one sampler per connection across instances) and the job system (without
// --redis) are in the database; the data dir is shared, each server holding a slot in it with its
// own SQLite file for what stays per server: the UI state.
import type { Pool } from 'pg';
import { connectPg, type PgConnectOptions } from './connect.ts';
import { migrate } from './migrate.ts';
import { explainConnectError } from './start-errors.ts';
import { PgStoreError } from '../database-url.ts';
import { storageErrorsOn } from './storage-errors.ts';

export { PgStoreError, redactUrl } from '../database-url.ts';
export { takeBuild } from './take.ts';
export { startPgNotify, NOTIFY_CHANNEL, PgNotifyEvents, type PgNotifyBridge, type PgNotifyOptions, type PgChange, type PgChangeReceived } from './notify.ts';
export { PgTraceStore, type PgTraceOptions } from './traces.ts';
export type { Queryable } from './connect.ts';
export { PgRunners, RunnerProjectMissingError } from './runners.ts';
export { PgProjects } from './projects.ts';
export { PgUsers, UsernameTakenError } from './users.ts';
export { PgSecrets } from './secrets.ts';
export { PgBuilds, BuildProjectMissingError } from './builds.ts';
export type { AsyncPort, RunnersPortAsync, ProjectsPortAsync, UsersPortAsync, SecretsPortAsync, BuildsPortAsync, ListingsPortAsync, ConnectionsRepoAsync, AlertsRepoAsync, MonitorHistoryRepoAsync } from '../ports/async-ports.ts';
// The PostgreSQL adapters of the listings and monitor ports, re-exported here. Each takes a
// Queryable: the pool, or a client inside BEGIN…COMMIT where several writes must be one unit (the
// monitor records a sample's rows in one transaction on SQLite; MonitorStore.tx).
//
// ArtifactsPort has no PostgreSQL adapter, on purpose: the archives are files in the shared data
// dir, and what SQLite keeps of them in rows (key, file name, size, expiry) is in the builds row,
// written and read by PgBuilds (setArtifacts, clearArtifacts, expiredArtifacts, artifactKeys). The
// file side (store/files/artifacts.ts ArtifactStore) serves either store unchanged.
export { PgListings } from './listings.ts';
export { PgConnections } from './monitor-connections.ts';
export { PgAlerts, AlertConnectionMissingError } from './monitor-alerts.ts';
export { PgMonitorHistory } from './monitor-history.ts';
export { pgText } from './nul-free-text.ts';
export { pgMonitorStore, type PgMonitorStore, type PgMonitorRepos } from './monitor-store.ts';

export interface PgDatabase {
  /** Its failures under a request are StorageErrors (storage-errors.ts): 503 with Retry-After, 507 when full. */
  pool: Pool;
  /** The schema version the database is at. */
  schemaVersion: number;
  /** Versions this instance applied at start (empty when they were there already). */
  applied: number[];
  close(): Promise<void>;
}

/** Connects and brings the schema up to date; throws a PgStoreError that says what to do when it cannot. */
export async function openPgDatabase(url: string, opts: PgConnectOptions = {}): Promise<PgDatabase> {
  const pool = await connectPg(url, opts);
  try {
    // On a session of its own without the statement bounds: the wait for another instance's
    // migration, or a migration of a large table, may outlast them.
    const bare = opts.statementTimeoutMs ? await connectPg(url, { ...opts, statementTimeoutMs: undefined, max: 1 }) : pool;
    const { version, applied } = await migrate(bare).finally(() => (bare === pool ? undefined : bare.end()));
    let closed = false;
    return {
      // Migrated on the bare pool: a failure at start is a PgStoreError that says what to do, not a 503.
      pool: storageErrorsOn(pool),
      schemaVersion: version,
      applied,
      async close() {
        if (closed) return;
        closed = true;
        await pool.end();
      },
    };
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err instanceof PgStoreError ? err : explainConnectError(err, url);
  }
}
