// Monitor connections on PostgreSQL: ConnectionsRepo of store/ports/monitor-ports.ts, asynchronous, with
// the semantics of store/sqlite/monitor-connections.ts (remote tokens stored as given; the data dir's
// privacy is the database's access control here).
//
// The sample and the thresholds are json columns read back as text (::text), as SQLite hands them
// over: json keeps the text as written, so lastSample() answers the very JSON the sampler stored,
// and thresholds that do not parse read as {queues: {}} by the same rule.
import type { Thresholds } from '../../../contract/app.ts';
import type { Connection, ConnectionFields } from '../ports/monitor-ports.ts';
import { connectionFromRow, FIELD_COLUMNS, type ConnectionRow } from '../rows/monitor-rows.ts';
import type { Queryable } from './connect.ts';
import type { ConnectionsRepoAsync } from '../ports/async-ports.ts';
import { pgText } from './nul-free-text.ts';

const COLUMNS = 'id, name, kind, base_url, private_token, api_version, segment, interval_s, enabled, allow_changes, thresholds::text AS thresholds, last_sample_at, last_error, created_at';

export class PgConnections implements ConnectionsRepoAsync {
  constructor(private readonly db: Queryable) {}

  async ensureEmbedded(id: string, intervalS: number, createdAt: number): Promise<void> {
    await this.db.query(
      `INSERT INTO monitor_connections (id, name, kind, api_version, segment, interval_s, enabled, created_at)
       VALUES ($1, 'This Jobscope', 'embedded', 'v4', 'sidekiq', $2, true, $3) ON CONFLICT (id) DO NOTHING`,
      [id, intervalS, createdAt],
    );
  }

  /** The embedded connection first, then by creation; ids compared byte by byte (COLLATE "C"), as SQLite's BINARY does, whatever the database's collation. */
  async list(): Promise<Connection[]> {
    const { rows } = await this.db.query<ConnectionRow>(`SELECT ${COLUMNS} FROM monitor_connections ORDER BY kind = 'embedded' DESC, created_at, id COLLATE "C"`);
    return rows.map(connectionFromRow);
  }

  async get(id: string): Promise<Connection | undefined> {
    const { rows } = await this.db.query<ConnectionRow>(`SELECT ${COLUMNS} FROM monitor_connections WHERE id = $1`, [id]);
    return rows[0] && connectionFromRow(rows[0]);
  }

  async create(id: string, c: ConnectionFields & { baseUrl: string; token: string; kind?: 'gitlab' | 'sidekiq' }, createdAt: number): Promise<Connection> {
    const { rows } = await this.db.query<ConnectionRow>(
      `INSERT INTO monitor_connections (id, name, kind, base_url, private_token, api_version, segment, interval_s, enabled, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
      [id, c.name, c.kind ?? 'gitlab', c.baseUrl, c.token, c.apiVersion, c.segment, c.intervalS, c.enabled, createdAt],
    );
    return connectionFromRow(rows[0]!);
  }

  async update(id: string, patch: Partial<ConnectionFields>): Promise<Connection | undefined> {
    const sets: string[] = [];
    const values: (string | number | boolean | null)[] = [];
    for (const [key, col] of Object.entries(FIELD_COLUMNS)) {
      const v = patch[key as keyof ConnectionFields];
      if (v === undefined) continue;
      values.push(v);
      sets.push(`${col} = $${values.length}`);
    }
    if (!sets.length) return this.get(id);
    values.push(id);
    const { rows } = await this.db.query<ConnectionRow>(`UPDATE monitor_connections SET ${sets.join(', ')} WHERE id = $${values.length} RETURNING ${COLUMNS}`, values);
    return rows[0] && connectionFromRow(rows[0]);
  }

  async setThresholds(id: string, t: Thresholds): Promise<void> {
    await this.db.query('UPDATE monitor_connections SET thresholds = $1::json WHERE id = $2', [JSON.stringify(t), id]);
  }

  /** The error text comes from the remote server: see text.ts for what happens to a U+0000 in it. */
  async setHealth(id: string, at: number, error: string | null, sampleJson?: string): Promise<void> {
    if (error !== null) await this.db.query('UPDATE monitor_connections SET last_error = $1 WHERE id = $2', [pgText(error), id]);
    else if (sampleJson !== undefined) {
      await this.db.query('UPDATE monitor_connections SET last_sample_at = $1, last_error = NULL, last_sample = $2::json WHERE id = $3', [at, sampleJson, id]);
    } else await this.db.query('UPDATE monitor_connections SET last_sample_at = $1, last_error = NULL WHERE id = $2', [at, id]);
  }

  async lastSample(id: string): Promise<{ at: number; json: string } | undefined> {
    const { rows } = await this.db.query<{ last_sample_at: number | null; last_sample: string | null }>(
      'SELECT last_sample_at, last_sample::text AS last_sample FROM monitor_connections WHERE id = $1',
      [id],
    );
    const r = rows[0];
    return r?.last_sample && r.last_sample_at !== null ? { at: r.last_sample_at, json: r.last_sample } : undefined;
  }

  /** Its history, queue names and alerts go with it (ON DELETE CASCADE). */
  async remove(id: string): Promise<boolean> {
    const { rowCount } = await this.db.query("DELETE FROM monitor_connections WHERE id = $1 AND kind != 'embedded'", [id]);
    return (rowCount ?? 0) > 0;
  }
}
