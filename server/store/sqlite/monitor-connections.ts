// SQLite adapter of ConnectionsRepo (store/ports/monitor-ports.ts): the monitor_connections table.
// Remote connections' PRIVATE-TOKENs (and sidekiq connections' Redis passwords) are stored here in
// the clear (the data dir is private).
import type { Db } from './db.ts';
import type { Thresholds } from '../../../contract/app.ts';
import type { Connection, ConnectionFields, ConnectionsRepo } from '../ports/monitor-ports.ts';
import { connectionFromRow, FIELD_COLUMNS, type ConnectionRow } from '../rows/monitor-rows.ts';

export class SqliteConnections implements ConnectionsRepo {
  constructor(private readonly db: Db) {}

  ensureEmbedded(id: string, intervalS: number, createdAt: number): void {
    this.db.run(
      `INSERT OR IGNORE INTO monitor_connections (id, name, kind, api_version, segment, interval_s, enabled, created_at)
       VALUES (?, 'This Jobscope', 'embedded', 'v4', 'sidekiq', ?, 1, ?)`,
      [id, intervalS, createdAt],
    );
  }

  list(): Connection[] {
    return this.db
      .all<ConnectionRow>("SELECT * FROM monitor_connections ORDER BY kind = 'embedded' DESC, created_at, id")
      .map(connectionFromRow);
  }

  get(id: string): Connection | undefined {
    const r = this.db.get<ConnectionRow>('SELECT * FROM monitor_connections WHERE id = ?', [id]);
    return r ? connectionFromRow(r) : undefined;
  }

  create(id: string, c: ConnectionFields & { baseUrl: string; token: string; kind?: 'gitlab' | 'sidekiq' }, createdAt: number): Connection {
    this.db.run(
      `INSERT INTO monitor_connections (id, name, kind, base_url, private_token, api_version, segment, interval_s, enabled, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [id, c.name, c.kind ?? 'gitlab', c.baseUrl, c.token, c.apiVersion, c.segment, c.intervalS, c.enabled ? 1 : 0, createdAt],
    );
    return this.get(id)!;
  }

  update(id: string, patch: Partial<ConnectionFields>): Connection | undefined {
    const sets: string[] = [];
    const values: (string | number | null)[] = [];
    for (const [key, col] of Object.entries(FIELD_COLUMNS)) {
      const v = patch[key as keyof ConnectionFields];
      if (v === undefined) continue;
      sets.push(`${col} = ?`);
      values.push(typeof v === 'boolean' ? (v ? 1 : 0) : v);
    }
    if (sets.length) this.db.run(`UPDATE monitor_connections SET ${sets.join(', ')} WHERE id = ?`, [...values, id]);
    return this.get(id);
  }

  setThresholds(id: string, t: Thresholds): void {
    this.db.run('UPDATE monitor_connections SET thresholds = ? WHERE id = ?', [JSON.stringify(t), id]);
  }

  setHealth(id: string, at: number, error: string | null, sampleJson?: string): void {
    if (error !== null) this.db.run('UPDATE monitor_connections SET last_error = ? WHERE id = ?', [error, id]);
    else if (sampleJson !== undefined) this.db.run('UPDATE monitor_connections SET last_sample_at = ?, last_error = NULL, last_sample = ? WHERE id = ?', [at, sampleJson, id]);
    else this.db.run('UPDATE monitor_connections SET last_sample_at = ?, last_error = NULL WHERE id = ?', [at, id]);
  }

  lastSample(id: string): { at: number; json: string } | undefined {
    const r = this.db.get<{ last_sample_at: number | null; last_sample: string | null }>(
      'SELECT last_sample_at, last_sample FROM monitor_connections WHERE id = ?',
      [id],
    );
    return r?.last_sample && r.last_sample_at !== null ? { at: r.last_sample_at, json: r.last_sample } : undefined;
  }

  remove(id: string): boolean {
    return this.db.run("DELETE FROM monitor_connections WHERE id = ? AND kind != 'embedded'", [id]).changes > 0;
  }
}
