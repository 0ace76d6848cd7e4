// The domain's backend on PostgreSQL, as one server instance opens it: the database brought up to
// date (migrate.ts, under an advisory lock), the LISTEN connection (notify.ts), the instance tokens
// from the shared settings table, and the ports and strategies over them (backend.ts). Changes
// other instances commit are re-emitted on this instance's AppEvents, so its log and live views see
// their new builds and finishes; X-GitLab-Last-Update follows the database's counter
// (runner-queue.ts), the same value on every instance.
import type { Pool } from 'pg';
import type { AppEvents } from '../../events.ts';
import type { DomainBackend } from '../../domain/backend.ts';
import type { User } from '../ports/user.ts';
import type { ArtifactsPort } from '../ports/ports.ts';
import { newToken } from '../../auth/tokens.ts';
import { openPgDatabase } from './index.ts';
import { startPgNotify, type PgChangeReceived } from './notify.ts';
import { PgSecrets } from './secrets.ts';
import { PgTraceStore } from './traces.ts';
import { PgBuilds } from './builds.ts';
import { PgUsers } from './users.ts';
import { pgDomainBackend } from './backend.ts';
import { PgRunnerQueue, type FollowingQueue } from './runner-queue.ts';

export interface PgBackendOptions {
  events: AppEvents;
  /**
   * Opens the files this instance keeps (the data dir's slot), once the instance's credentials are
   * read from the database, so they are the files' from the start: the traces folder (shared by
   * every instance) and the archives.
   */
  files: (credentials: PgCredentials) => { tracesDir: string; artifacts: ArtifactsPort };
  fsync: boolean;
  maxTraceBytes: number;
  /** Given ones override the stored tokens and are stored, as on SQLite (Secrets.ensure). */
  adminToken?: string;
  registrationToken?: string;
  /** X-GitLab-Last-Update's value (context.ts RunnerQueue): made to follow the database's, shared by every instance. */
  runnerQueue: FollowingQueue;
  onError?: (err: Error) => void;
  /** The pool's bounds (connect.ts): how long a request waits for a connection, and for a statement. */
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
}

/** The tokens every instance shares, from the database's settings table, and whose PRIVATE-TOKENs the admin API accepts. */
export interface PgCredentials {
  adminToken: string;
  registrationToken: string;
  tokenUsers: { byToken(token: string): Promise<User | undefined> };
}

export interface PgBackend {
  backend: DomainBackend;
  /** This instance's id in notifications. */
  instanceId: string;
  /** The job system's backend and the monitor share it (open-backends.ts): whatever uses it must be stopped before close(). */
  pool: Pool;
  close(): Promise<void>;
}

export async function openPgBackend(url: string, opts: PgBackendOptions): Promise<PgBackend> {
  const db = await openPgDatabase(url, { connectTimeoutMs: opts.connectTimeoutMs, statementTimeoutMs: opts.statementTimeoutMs });
  const report = (err: unknown) => opts.onError?.(err instanceof Error ? err : new Error(String(err)));
  let notify;
  try {
    notify = await startPgNotify(url, { onError: report });
  } catch (err) {
    await db.close();
    throw err;
  }
  try {
    const secrets = new PgSecrets(db.pool);
    // Sequential: ensure() of two keys at once would race nothing, but the order keeps ids and logs readable.
    const adminToken = await secrets.ensure('admin_token', opts.adminToken, () => newToken(16));
    const registrationToken = await secrets.ensure('registration_token', opts.registrationToken, () => newToken());
    const runnerQueue = await PgRunnerQueue.open(db.pool, opts.runnerQueue);
    const files = opts.files({ adminToken, registrationToken, tokenUsers: new PgUsers(db.pool) });
    const traces = new PgTraceStore(db.pool, files.tracesDir, { fsync: opts.fsync, maxBytes: opts.maxTraceBytes });
    // A database failure under a request answers 507/503 as SQLite's does: the pool raises it so (storage-errors.ts).
    const backend = pgDomainBackend({ pool: db.pool, notify, traces, artifacts: files.artifacts, runnerQueue, registrationToken });
    const builds = new PgBuilds(db.pool);
    // A notification carries ids only (notify-payload.ts): the committed rows are read, then emitted.
    // Those that arrive together are read in one query, in arrival order: a request for 1,000 builds
    // on another instance commits 1,000 notifications at once, and a read each filled this
    // instance's pool, so its runners' polls waited behind them (paced poll p99 623 ms, p50 4 ms).
    let arrived: { kind: 'build:pending' | 'build:finished'; id: number }[] = [];
    const readArrived = () => {
      const batch = arrived;
      arrived = [];
      // Another instance's new builds moved the shared Last-Update counter: read with the rows, so the
      // value runners are answered here has moved by the time their build:pending is emitted.
      const counter = batch.some((c) => c.kind === 'build:pending') ? runnerQueue.refresh() : undefined;
      Promise.all([builds.byIds(batch.map((c) => c.id)), counter]).then(([rows]) => {
        const byId = new Map(rows.map((b) => [b.id, b]));
        for (const c of batch) {
          const b = byId.get(c.id);
          if (b) opts.events.emit(c.kind, b);
        }
      }, report);
    };
    const reemit = (kind: 'build:pending' | 'build:finished') => (change: PgChangeReceived) => {
      // Finished on another instance: the append handle this one may keep for it is of no more use.
      if (kind === 'build:finished') traces.release(change.buildId).catch(report);
      if (!arrived.length) setImmediate(readArrived);
      arrived.push({ kind, id: change.buildId });
    };
    notify.events.on('build:pending', reemit('build:pending'));
    notify.events.on('build:finished', reemit('build:finished'));
    // Builds made pending while the LISTEN session was down were not heard: the counter says whether there were any.
    notify.events.on('resync', () => void runnerQueue.refresh().catch(report));
    const bridge = notify;
    return {
      backend,
      instanceId: bridge.instanceId,
      pool: db.pool,
      async close() {
        await bridge.close();
        await traces.close();
        await db.close();
      },
    };
  } catch (err) {
    await notify.close();
    await db.close();
    throw err;
  }
}
