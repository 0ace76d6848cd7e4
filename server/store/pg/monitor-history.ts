// Monitor history on PostgreSQL: MonitorHistoryRepo of store/ports/monitor-ports.ts, asynchronous, with
// the semantics of store/sqlite/monitor-history.ts (monitor_samples and monitor_queue_names).
//
// samples() answers the rows as one array where SQLite iterates them: the monitor rebuilds its
// in-memory history from all of them at start either way, so holding them once more for the length
// of that loop is the whole cost, and no cursor (another dependency, a client held) is needed.
import type { SampleRow } from '../ports/monitor-ports.ts';
import type { Queryable } from './connect.ts';
import type { MonitorHistoryRepoAsync } from '../ports/async-ports.ts';
import { pgText } from './nul-free-text.ts';

// t is bigint: a fractional bound would make pg throw where SQLite compares; rows hold integer times.
const safe = (n: number) => Math.min(Math.max(n, Number.MIN_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);

export class PgMonitorHistory implements MonitorHistoryRepoAsync {
  constructor(private readonly db: Queryable) {}

  async queueNames(connectionId: string): Promise<{ idx: number; name: string }[]> {
    const { rows } = await this.db.query<{ idx: number; name: string }>('SELECT idx, name FROM monitor_queue_names WHERE connection_id = $1 ORDER BY idx', [connectionId]);
    return rows;
  }

  /** The name comes from the remote server: see text.ts for what happens to a U+0000 in it. */
  async setQueueName(connectionId: string, idx: number, name: string): Promise<void> {
    await this.db.query(
      'INSERT INTO monitor_queue_names (connection_id, idx, name) VALUES ($1, $2, $3) ON CONFLICT (connection_id, idx) DO UPDATE SET name = excluded.name',
      [connectionId, idx, pgText(name)],
    );
  }

  /** Every row of a connection, by tier then time; data as a Buffer (a Uint8Array), as pg reads bytea. */
  async samples(connectionId: string): Promise<SampleRow[]> {
    const { rows } = await this.db.query<SampleRow>('SELECT tier, t, error, data FROM monitor_samples WHERE connection_id = $1 ORDER BY tier, t', [connectionId]);
    return rows;
  }

  /**
   * Rows of one tier after time `t`, by time: what an instance that does not sample the connection
   * reads to follow the one that does (monitor/shared-ownership.ts), instead of all of them each time.
   */
  async samplesAfter(connectionId: string, tier: number, t: number): Promise<SampleRow[]> {
    const after = Number.isFinite(t) ? safe(Math.floor(t)) : Number.MIN_SAFE_INTEGER;
    const { rows } = await this.db.query<SampleRow>('SELECT tier, t, error, data FROM monitor_samples WHERE connection_id = $1 AND tier = $2 AND t > $3 ORDER BY t', [connectionId, tier, after]);
    return rows;
  }

  /** Queue names from index `idx` on (names are only ever appended). */
  async queueNamesFrom(connectionId: string, idx: number): Promise<{ idx: number; name: string }[]> {
    const { rows } = await this.db.query<{ idx: number; name: string }>('SELECT idx, name FROM monitor_queue_names WHERE connection_id = $1 AND idx >= $2 ORDER BY idx', [connectionId, idx]);
    return rows;
  }

  async putSample(connectionId: string, row: SampleRow): Promise<void> {
    await this.db.query(
      `INSERT INTO monitor_samples (connection_id, tier, t, error, data) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (connection_id, tier, t) DO UPDATE SET error = excluded.error, data = excluded.data`,
      [connectionId, row.tier, row.t, pgText(row.error), row.data === null ? null : Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength)],
    );
  }

  async deleteBefore(connectionId: string, tier: number, t: number): Promise<void> {
    if (Number.isNaN(t)) return;
    await this.db.query('DELETE FROM monitor_samples WHERE connection_id = $1 AND tier = $2 AND t < $3', [connectionId, tier, safe(Math.ceil(t))]);
  }
}
