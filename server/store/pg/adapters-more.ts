// The PostgreSQL adapters of the listings and monitor ports, re-exported by index.ts. Each takes a
// Queryable: the pool, or a client inside BEGIN…COMMIT where several writes must be one unit (the
// monitor records a sample's rows in one transaction on SQLite; MonitorStore.tx).
//
// ArtifactsPort has no PostgreSQL adapter, on purpose: the archives are files in the shared data
// dir, and what SQLite keeps of them in rows (key, file name, size, expiry) is in the builds row,
// written and read by PgBuilds (setArtifacts, clearArtifacts, expiredArtifacts, artifactKeys). The
// file side (store/artifacts.ts ArtifactStore) serves either store unchanged.
export { PgListings, type ListingsPortAsync } from './listings.ts';
export { PgConnections, type ConnectionsRepoAsync } from './monitor-connections.ts';
export { PgAlerts, AlertConnectionMissingError, type AlertsRepoAsync } from './monitor-alerts.ts';
export { PgMonitorHistory, type MonitorHistoryRepoAsync } from './monitor-history.ts';
export { pgText } from './text.ts';
export { pgMonitorStore, type PgMonitorStore, type PgMonitorRepos } from './monitor-store.ts';
