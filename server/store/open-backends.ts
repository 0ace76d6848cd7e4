// The one place the configured backends are chosen and opened: the data dir's SQLite store, or the
// shared PostgreSQL coordinator beside a slot of the data dir (`serve --database`); the job backend
// (SQLite, the database's rows, or Redis in Sidekiq's layout with --redis). What it answers is
// whole when it returns: the domain's ports and strategies, the job backend, the monitor's shared
// session when there is one, and the instance's credentials in the store.
import type { Config } from '../config.ts';
import type { AppEvents } from '../events.ts';
import type { Clock } from '../clock.ts';
import type { JobBackend } from '../jobs/backend.ts';
import type { DomainBackend } from '../domain/backend.ts';
import type { FollowingQueue } from './pg/runner-queue.ts';
import type { PgBackend } from './pg/open-backend.ts';
import { openStore, type Store } from './index.ts';
import { sqliteDomainBackend } from './sqlite/domain-backend.ts';
import { openRedisJobBackend } from './redis/job-backend.ts';
import { normalizeRedisUrl } from '../sidekiq/redis-url.ts';
import { clientBoundsOf } from '../redis/bounded-client.ts';
import type { SharedMonitorStore } from './ports/monitor-ports.ts';

type JobLog = { warn(obj: unknown, msg?: string): void; info?(obj: unknown, msg?: string): void };

export interface BackendChoice {
  /** A PostgreSQL URL: builds, runners, projects, users, the monitor and (without --redis) the jobs are the database's. */
  database?: string;
  /** With `database`: this server's slot in the shared data dir (data-dir-shared.ts); default the lowest free one. */
  instance?: string;
  events: AppEvents;
  /** X-GitLab-Last-Update's value: with a database it follows the database's, the same on every instance. */
  runnerQueue: FollowingQueue;
  clock: Clock;
  /** The job system's, read when the job backend needs them (the job system is made after it). */
  kindOf: (cls: string) => string | undefined;
  jobLog: () => JobLog;
}

export interface Backends {
  /** What stays per server (layout, UI state, the monitor's SQLite tables) and the instance's credentials. */
  store: Store;
  domain: DomainBackend;
  jobBackend: JobBackend;
  /** The database session the monitor shares its connections through (database mode only). */
  sharedMonitor?: SharedMonitorStore;
  /** Ends the database side, then the store; whatever uses the pool (the job system, the monitor) is stopped first. */
  close(): Promise<void>;
}

export async function openBackends(config: Config, choice: BackendChoice): Promise<Backends> {
  let store: Store | undefined;
  let pg: PgBackend | undefined;
  try {
    if (choice.database !== undefined) {
      // Loaded only here: a server on SQLite never loads the PostgreSQL modules.
      const { openPgBackend } = await import('./pg/open-backend.ts');
      pg = await openPgBackend(choice.database, {
        events: choice.events,
        // The archives' rows are the database's and another instance may be between an upload's file and its row: no sweep.
        files: (credentials) => {
          store = openStore(config, { sweepArtifacts: false, shared: { instance: choice.instance }, credentials });
          return { tracesDir: store.layout.tracesDir, artifacts: store.artifacts };
        },
        fsync: config.fsync,
        maxTraceBytes: config.maxTraceBytes,
        adminToken: config.adminToken,
        registrationToken: config.registrationToken,
        connectTimeoutMs: config.databaseConnectTimeoutMs,
        statementTimeoutMs: config.databaseStatementTimeoutMs,
        runnerQueue: choice.runnerQueue,
      });
    } else {
      store = openStore(config);
    }
    const opened = store!;
    const jobBackend = await jobBackendOf(config, opened, pg, choice);
    const database = pg;
    return {
      store: opened,
      domain: database?.backend ?? sqliteDomainBackend(opened),
      jobBackend,
      sharedMonitor: database && choice.database !== undefined ? (await import('./pg/monitor-store.ts')).pgSharedMonitorStore(database.pool, choice.database) : undefined,
      async close() {
        try {
          await database?.close();
        } finally {
          opened.close();
        }
      },
    };
  } catch (err) {
    // A backend that fails to open must not leave the data dir locked.
    await pg?.close().catch(() => undefined);
    store?.close();
    throw err;
  }
}

/**
 * SQLite in the data dir; with --redis the Redis adapter in Sidekiq's layout (also beside a
 * database: Sidekiq's clients see the jobs there); with a database and no --redis its job tables,
 * shared by every instance, so a periodic job or an upload's listing runs once, not once per instance.
 */
async function jobBackendOf(config: Config, store: Store, pg: PgBackend | undefined, choice: BackendChoice): Promise<JobBackend> {
  const { clock, kindOf, jobLog: log } = choice;
  if (config.redisUrl) {
    const checked = normalizeRedisUrl(config.redisUrl);
    if ('error' in checked) throw new Error(`--redis: ${checked.error}`);
    return openRedisJobBackend({ url: config.redisUrl, processTtlS: config.redisProcessTtlS, beatEveryMs: config.redisBeatMs, now: () => clock.now(), kindOf, maxQueuesRead: config.sidekiqMaxQueues, deadMax: config.jobDeadMax, log: { info: (o, m) => { const l = log(); (l.info ?? l.warn).call(l, o, m); }, warn: (o, m) => log().warn(o, m) }, bounds: clientBoundsOf(config) });
  }
  if (!pg) return store.jobBackend;
  const { PgJobBackend } = await import('./pg/job-backend.ts');
  // The pool is the backend's: the job system stops (leave()) with the services, before pg.close() ends it.
  return new PgJobBackend({ pool: pg.pool, now: () => clock.now(), processTtlMs: config.redisProcessTtlS * 1000, beatEveryMs: config.redisBeatMs, maxQueuesRead: config.sidekiqMaxQueues });
}
