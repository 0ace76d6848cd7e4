// The monitor's storage ports: watched connections, their sampled history and threshold alerts.
// The SQLite adapters are store/monitor-*.ts; server/monitor/ reaches storage through these only.
//
// Synchronous, like the other ports (store/ports.ts): a sample is recorded in one transaction with
// no await inside it, and start-up rebuilds the in-memory history by iterating rows. The shared,
// asynchronous store (PostgreSQL) is SharedMonitorStore below; the routes call the monitor, never
// these ports.
import type { Alert, Thresholds } from '../../../contract/app.ts';
import type { AsyncPort } from './async-port.ts';

export interface Connection {
  id: string;
  name: string;
  /** sidekiq: `baseUrl` is the Redis URL (no password), `token` the Redis password ('' for none), `segment` the namespace ('' for none). */
  kind: 'embedded' | 'gitlab' | 'sidekiq';
  baseUrl: string | null;
  token: string | null;
  apiVersion: 'v3' | 'v4';
  segment: string;
  intervalS: number;
  enabled: boolean;
  /** Actions that write to the connection's Redis (retry, delete, kill, quiet…) are allowed; off by default. */
  allowChanges: boolean;
  thresholds: Thresholds;
  lastSampleAt: number | null;
  lastError: string | null;
  createdAt: number;
}

export type ConnectionFields = Pick<Connection, 'name' | 'baseUrl' | 'token' | 'apiVersion' | 'segment' | 'intervalS' | 'enabled'> & { allowChanges?: boolean };

export interface ConnectionsRepo {
  /** Creates the connection to this server unless it exists (it can be changed, never deleted). */
  ensureEmbedded(id: string, intervalS: number, createdAt: number): void;
  /** The embedded connection first, then by creation. */
  list(): Connection[];
  get(id: string): Connection | undefined;
  create(id: string, fields: ConnectionFields & { baseUrl: string; token: string; kind?: 'gitlab' | 'sidekiq' }, createdAt: number): Connection;
  update(id: string, patch: Partial<ConnectionFields>): Connection | undefined;
  setThresholds(id: string, t: Thresholds): void;
  /** Health after a sample; the full sample (JSON) is passed only now and then. */
  setHealth(id: string, at: number, error: string | null, sampleJson?: string): void;
  lastSample(id: string): { at: number; json: string } | undefined;
  /** Deletes a remote connection with its history and alerts; false for the embedded one or an unknown id. */
  remove(id: string): boolean;
}

export interface NewAlert {
  connectionId: string;
  kind: Alert['kind'];
  queue: string | null;
  value: number;
  threshold: number;
  at: number;
}

export interface AlertsRepo {
  /** Stores a firing alert; returns its id (ids grow: clients poll with `since`). */
  add(a: NewAlert): number;
  since(sinceId: number, limit: number, connectionId?: string): Alert[];
  /** A connection's alerts firing now, oldest first. */
  firing(connectionId: string): Alert[];
  /** Ends these alerts (those still firing) at `at`. */
  resolve(ids: number[], at: number): void;
  /** Keeps only the `keep` most recently resolved alerts. */
  trimResolved(keep: number): void;
  /** Marks an alert acknowledged (once: a second call keeps the first time); undefined for an unknown id. */
  acknowledge(id: number, at: number): Alert | undefined;
  /** The `firing` oldest alerts firing now, and the `resolved` most recently resolved, newest first. */
  board(firing: number, resolved: number): { firing: Alert[]; resolved: Alert[] };
  /** Drops resolved alerts that fired before `at` (a firing alert stays however old). */
  deleteBefore(at: number): void;
}

/** Tier 0: raw samples; tier 1: 1-minute rollups. `data` is sample-codec's encoding, null for a gap. */
export interface SampleRow {
  tier: number;
  t: number;
  error: string | null;
  data: Uint8Array | null;
}

export interface MonitorHistoryRepo {
  /** Queue names of a connection's rows, by index (rows store indexes, not names). */
  queueNames(connectionId: string): Iterable<{ idx: number; name: string }>;
  setQueueName(connectionId: string, idx: number, name: string): void;
  /** Every row of a connection, by tier then time. */
  samples(connectionId: string): Iterable<SampleRow>;
  /** Writes a row; one at the same tier and time is replaced. */
  putSample(connectionId: string, row: SampleRow): void;
  deleteBefore(connectionId: string, tier: number, t: number): void;
}

export interface MonitorStore {
  connections: ConnectionsRepo;
  alerts: AlertsRepo;
  history: MonitorHistoryRepo;
  /** One atomic unit of monitor writes; nested calls join the outer one. */
  tx<T>(fn: () => T): T;
}

// A store several instances share (PostgreSQL in `serve --database`): every answer comes later, and
// which instance samples a connection is decided on a session of its own (MonitorSession). The
// adapter is store/pg/monitor-store.ts; the monitor's policy that uses it, monitor/shared-ownership.ts.

export type ConnectionsRepoLater = AsyncPort<ConnectionsRepo>;
export type AlertsRepoLater = AsyncPort<AlertsRepo>;

export interface SharedHistoryRepo extends Omit<AsyncPort<MonitorHistoryRepo>, 'queueNames' | 'samples'> {
  queueNames(connectionId: string): Promise<{ idx: number; name: string }[]>;
  samples(connectionId: string): Promise<SampleRow[]>;
  /** The rows of one tier after `t`: how an instance that does not sample a connection follows it. */
  samplesAfter(connectionId: string, tier: number, t: number): Promise<SampleRow[]>;
  queueNamesFrom(connectionId: string, idx: number): Promise<{ idx: number; name: string }[]>;
}

/** What one sample writes, on the session, in one transaction. */
export interface SessionRepos {
  connections: Pick<ConnectionsRepoLater, 'setHealth'>;
  /** Alert ids grow in commit order: clients poll with `since`, and instances commit in any order. */
  alerts: { addInCommitOrder(a: NewAlert): Promise<number> } & Pick<AlertsRepoLater, 'firing' | 'resolve' | 'trimResolved'>;
  history: Pick<SharedHistoryRepo, 'setQueueName' | 'putSample' | 'deleteBefore'>;
}

export interface MonitorSessionOptions {
  /** Tags this instance's notifications so it can drop its own. */
  instanceId: string;
  /** The session is gone: every lock with it. The monitor stops sampling what it held. */
  onLost: (err: Error) => void;
  /** Another instance changed this connection (or '' for "re-check every one"). */
  onChange: (connectionId: string) => void;
  onError?: (err: Error) => void;
}

export interface MonitorSession {
  /** Of these connection ids, the ones this session now holds (taken now or before). */
  claim(ids: string[]): Promise<string[]>;
  release(id: string): Promise<void>;
  /** Runs fn in a transaction on the session: it commits only while the session (and what it holds) lives. */
  write<T>(fn: (repos: SessionRepos) => Promise<T>): Promise<T>;
  /** Tells the other instances a connection changed (after its change committed). */
  announce(connectionId: string): Promise<void>;
  readonly alive: boolean;
  /** Frees what it holds and ends the session; the others take over at their next claim. */
  close(): Promise<void>;
}

export interface SharedMonitorStore {
  connections: ConnectionsRepoLater;
  alerts: AlertsRepoLater;
  history: SharedHistoryRepo;
  openSession(opts: MonitorSessionOptions): Promise<MonitorSession>;
}
