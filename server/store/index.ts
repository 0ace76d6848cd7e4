// Opens everything kept in the data dir, as one object the route plugins receive.
import type { Config } from '../config.ts';
import { acquireDataDir, releaseDataDir, type DataDirLayout } from './files/data-dir.ts';
import { acquireInstanceDir } from './files/data-dir-shared.ts';
import { tightenTree } from '../util/private-files.ts';
import { Db } from './sqlite/db.ts';
import { Secrets } from './sqlite/secrets.ts';
import { Users } from './sqlite/users.ts';
import type { User } from './ports/user.ts';
import { Projects } from './sqlite/projects.ts';
import { Runners } from './sqlite/runners.ts';
import { Builds } from './sqlite/builds.ts';
import { TraceStore } from './files/traces.ts';
import { ArtifactStore } from './files/artifacts.ts';
import { ArtifactListings } from './sqlite/artifact-listings.ts';
import { newToken } from '../auth/tokens.ts';
import type { MonitorStore } from './ports/monitor-ports.ts';
import { sqliteMonitorStore } from './sqlite/monitor-store.ts';
import { SqliteJobBackend } from './sqlite/job-backend.ts';
import type { SyncJobBackend } from '../jobs/backend.ts';
import type { ArtifactsPort, BuildsPort, ListingsPort, ProjectsPort, RunnersPort, SecretsPort, TracesPort, Transactions, UiStatePort, UsersPort } from './ports/ports.ts';
import { UiStateFile } from './files/ui-state.ts';

/**
 * Storage as ports (store/ports/ports.ts): the domain layer reads and writes through these, never through
 * an adapter class; the monitor's are store/ports/monitor-ports.ts (Store.monitor), the job system's
 * jobs/backend.ts (Store.jobBackend). The database handle is not part of it: see databaseOf.
 */
export interface Store extends Transactions {
  layout: DataDirLayout;
  /** Where the job system keeps its jobs, retries, dead set and counters (SQLite: every step done when the call returns; open-backends.ts may choose the Redis or the database adapter instead). */
  jobBackend: SyncJobBackend;
  /** The instance's tokens (the `settings` table; not user settings: those are in config.ts and settings.json). */
  secrets: SecretsPort;
  users: UsersPort;
  projects: ProjectsPort;
  runners: RunnersPort;
  builds: BuildsPort;
  traces: TracesPort;
  artifacts: ArtifactsPort;
  listings: ListingsPort;
  /** Watched connections, their sampled history and alerts (store/ports/monitor-ports.ts). */
  monitor: MonitorStore;
  /** The UI's saved state (<data dir>/ui-state.json; kept by "reset data", like settings.json). */
  uiState: UiStatePort;
  adminToken: string;
  registrationToken: string;
  /**
   * Who a PRIVATE-TOKEN belongs to (auth/admin.ts): `users` here; in database mode the database's
   * (OpenStoreOptions.credentials), so the admin API never reads this file's users.
   */
  tokenUsers: { byToken(token: string): User | undefined | Promise<User | undefined> };
  close(): void;
}

const handles = new WeakMap<Store, Db>();

/**
 * The raw SQLite handle under a store, for tests and benchmarks that inspect the file itself (row
 * counts, integrity_check, planting an old version's rows). Server code goes through the ports;
 * lint keeps server/ outside store/ from importing the handle's module.
 */
export function databaseOf(store: Store): Db {
  const db = handles.get(store);
  if (!db) throw new Error('not a store opened by openStore');
  return db;
}

export interface OpenStoreOptions {
  /**
   * Delete archive files no build row names (a crash between an upload's file and its row). Off
   * when the builds are in PostgreSQL (open-backends.ts): the rows to check against are there, not in this
   * file, and another instance may be between its upload's file and its row at this moment.
   */
  sweepArtifacts?: boolean;
  /**
   * Database mode (open-backends.ts): the data dir is shared by the servers on that database. This one takes
   * a slot (data-dir-shared.ts: `instance` names it, else the lowest free one) and its SQLite file,
   * which then holds only what stays per server (the monitor; the UI state file is beside it), its
   * logs and temp uploads are the slot's; traces and artifacts are everyone's.
   */
  shared?: { instance?: string };
  /** The instance's tokens and token users when they are kept elsewhere (database mode: the database's); else this file's. */
  credentials?: Pick<Store, 'adminToken' | 'registrationToken' | 'tokenUsers'>;
}

export function openStore(config: Config, opts: OpenStoreOptions = {}): Store {
  const layout = opts.shared ? acquireInstanceDir(config.dataDir, opts.shared.instance) : acquireDataDir(config.dataDir);
  let db: Db;
  try {
    db = new Db(layout.dbFile, { fsync: config.fsync, walCheckpointEveryMs: config.walCheckpointEveryMs });
  } catch (err) {
    releaseDataDir(layout);
    throw err;
  }
  // node-sqlite3-wasm locks the database by making the folder `<db>.lock` (mode left to the umask).
  tightenTree(`${layout.dbFile}.lock`);
  const secrets = new Secrets(db);
  const builds = new Builds(db);
  const artifacts = new ArtifactStore(layout.artifactsDir, layout.tmpDir, { fsync: config.fsync, maxBytes: config.maxArtifactBytes });
  if (opts.sweepArtifacts !== false) artifacts.sweep(builds.artifactKeys());
  const users = new Users(db);
  const traces = new TraceStore(layout.tracesDir, layout.tmpDir, { fsync: config.fsync, maxBytes: config.maxTraceBytes });
  let closed = false;
  const store: Store = {
    layout,
    jobBackend: new SqliteJobBackend(db),
    tx: (fn) => db.tx(fn),
    secrets,
    users,
    projects: new Projects(db),
    runners: new Runners(db),
    builds,
    traces,
    artifacts,
    listings: new ArtifactListings(db),
    monitor: sqliteMonitorStore(db),
    uiState: new UiStateFile(layout.stateDir, layout.tmpDir, { fsync: config.fsync }),
    ...(opts.credentials ?? {
      adminToken: secrets.ensure('admin_token', config.adminToken, () => newToken(16)),
      registrationToken: secrets.ensure('registration_token', config.registrationToken, () => newToken()),
      tokenUsers: users,
    }),
    close() {
      if (closed) return;
      closed = true;
      traces.close();
      db.close();
      releaseDataDir(layout);
    },
  };
  handles.set(store, db);
  return store;
}
