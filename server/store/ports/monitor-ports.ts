// The monitor's storage ports: watched connections, their sampled history and threshold alerts.
// The SQLite adapters are store/monitor-*.ts; server/monitor/ reaches storage through these only.
//
// Synchronous, like the other ports (store/ports/ports.ts): a sample is recorded in one transaction with
// no await inside it, and start-up rebuilds the in-memory history by iterating rows. An asynchronous
// adapter (PostgreSQL) fits behind the monitor's own methods (record, start), which would await it;
// the routes call the monitor, never these ports.
import type { Alert, Thresholds } from '../../../contract/app.ts';

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
  thresholds: Thresholds;
  lastSampleAt: number | null;
  lastError: string | null;
  createdAt: number;
}

export type ConnectionFields = Pick<Connection, 'name' | 'baseUrl' | 'token' | 'apiVersion' | 'segment' | 'intervalS' | 'enabled'>;

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
  /** Stores an alert; returns its id (ids grow: clients poll with `since`). */
  add(a: NewAlert): number;
  since(sinceId: number, limit: number, connectionId?: string): Alert[];
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
