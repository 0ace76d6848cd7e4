// The monitor's rows as either store hands them over, read into the port's records the same way by
// the SQLite and the PostgreSQL adapters.
import type { Alert, Thresholds } from '../../../contract/app.ts';
import type { Connection, ConnectionFields } from '../ports/monitor-ports.ts';
import { storedInt } from './row-values.ts';
import { isoTimeOr0 } from '../../util/times.ts';

/** A monitor_alerts row with its connection's name, as either store hands it over (PostgreSQL's bigint id comes as text). */
export interface AlertRow {
  id: number | string;
  connection_id: string;
  connection_name: string;
  kind: string;
  queue: string | null;
  value: number;
  threshold: number;
  at: number;
  resolved_at: number | null;
  acknowledged_at: number | null;
}

/** What both stores select for an alert: its row and its connection's name (alerts go with their connection). */
export const ALERT_SELECT =
  'SELECT a.id, a.connection_id, c.name AS connection_name, a.kind, a.queue, a.value, a.threshold, a.at, a.resolved_at, a.acknowledged_at FROM monitor_alerts a JOIN monitor_connections c ON c.id = a.connection_id';

const isoOrNull = (t: number | null) => (t === null ? null : isoTimeOr0(t));

export const alertFromRow = (r: AlertRow): Alert => ({
  id: storedInt(r.id) ?? 0,
  connection_id: r.connection_id,
  connection_name: r.connection_name,
  kind: r.kind as Alert['kind'],
  queue: r.queue,
  value: r.value,
  threshold: r.threshold,
  state: r.resolved_at === null ? 'firing' : 'resolved',
  fired_at: isoTimeOr0(r.at),
  resolved_at: isoOrNull(r.resolved_at),
  acknowledged_at: isoOrNull(r.acknowledged_at),
});

/** A monitor_connections row as either store hands it over (SQLite's enabled is 0/1, PostgreSQL's a boolean). */
export interface ConnectionRow {
  id: string;
  name: string;
  kind: string;
  base_url: string | null;
  private_token: string | null;
  api_version: string;
  segment: string;
  interval_s: number;
  enabled: number | boolean;
  allow_changes: number | boolean;
  thresholds: string;
  last_sample_at: number | null;
  last_error: string | null;
  created_at: number;
}

export function connectionFromRow(r: ConnectionRow): Connection {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind === 'embedded' || r.kind === 'sidekiq' ? r.kind : 'gitlab',
    baseUrl: r.base_url,
    token: r.private_token,
    apiVersion: r.api_version === 'v3' ? 'v3' : 'v4',
    segment: r.segment,
    intervalS: r.interval_s,
    enabled: r.enabled === 1 || r.enabled === true,
    allowChanges: r.allow_changes === 1 || r.allow_changes === true,
    thresholds: parseThresholds(r.thresholds),
    lastSampleAt: r.last_sample_at,
    lastError: r.last_error,
    createdAt: r.created_at,
  };
}

function parseThresholds(text: string): Thresholds {
  try {
    const t = JSON.parse(text) as Thresholds;
    return { ...t, queues: t.queues ?? {} };
  } catch {
    return { queues: {} };
  }
}

/** The column of each field a change may set. */
export const FIELD_COLUMNS: Record<keyof ConnectionFields, string> = {
  name: 'name',
  baseUrl: 'base_url',
  token: 'private_token',
  apiVersion: 'api_version',
  segment: 'segment',
  intervalS: 'interval_s',
  enabled: 'enabled',
  allowChanges: 'allow_changes',
};
