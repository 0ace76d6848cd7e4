// Archive listings on PostgreSQL: ListingsPort of store/ports/ports.ts, asynchronous, with the semantics
// of store/sqlite/artifact-listings.ts. A row belongs to one archive (its artifacts_key): set() writes it
// only while the build still points at that archive, in one statement, so a listing job finishing
// after another instance replaced or removed the archive stores nothing; the schema's trigger drops
// the row when the key changes (migrations.ts).
import type { ArchiveEntry } from '../ports/build.ts';
import type { ArchiveListing, ListingSummary } from '../ports/artifact.ts';
import type { Queryable } from './connect.ts';
import type { ListingsPortAsync } from '../ports/async-ports.ts';

const isEntry = (v: unknown): v is ArchiveEntry =>
  typeof v === 'object' && v !== null && typeof (v as ArchiveEntry).name === 'string' && Number.isSafeInteger((v as ArchiveEntry).size);

// A bigint parameter that is not an integer makes pg throw; SQLite simply finds no row with that id.
const isKey = (id: number): boolean => Number.isSafeInteger(id);

/** total is an integer column: a count past it (no archive within any artifact limit holds 2^31 files) is kept at its ceiling, not refused. */
const INT4_MAX = 2 ** 31 - 1;

export class PgListings implements ListingsPortAsync {
  constructor(private readonly db: Queryable) {}

  async set(buildId: number, key: string, listing: ArchiveListing): Promise<boolean> {
    if (!isKey(buildId)) return false;
    const total = Math.min(Math.max(Math.trunc(listing.total) || 0, 0), INT4_MAX);
    // entries is json, not jsonb: a zip may name a file with U+0000, which json keeps (escaped) and jsonb refuses.
    const { rowCount } = await this.db.query(
      `INSERT INTO artifact_listings (build_id, artifacts_key, total, truncated, entries)
       SELECT id, artifacts_key, $1, $2, $3::json FROM builds WHERE id = $4 AND artifacts_key = $5
       ON CONFLICT (build_id) DO UPDATE SET artifacts_key = excluded.artifacts_key, total = excluded.total,
         truncated = excluded.truncated, entries = excluded.entries`,
      [total, listing.truncated, JSON.stringify(listing.entries), buildId, key],
    );
    return rowCount === 1;
  }

  async summary(buildId: number): Promise<ListingSummary | undefined> {
    if (!isKey(buildId)) return undefined;
    const { rows } = await this.db.query<{ total: number; truncated: boolean }>('SELECT total, truncated FROM artifact_listings WHERE build_id = $1', [buildId]);
    const r = rows[0];
    return r && { total: Number(r.total) || 0, truncated: r.truncated === true };
  }

  /** The kept entries; entries that are not {name, size} (a row edited by hand) are left out, as on SQLite. */
  async get(buildId: number): Promise<ArchiveListing | undefined> {
    if (!isKey(buildId)) return undefined;
    const { rows } = await this.db.query<{ total: number; truncated: boolean; entries: unknown }>(
      'SELECT total, truncated, entries FROM artifact_listings WHERE build_id = $1',
      [buildId],
    );
    const r = rows[0];
    if (!r) return undefined;
    const entries = Array.isArray(r.entries) ? r.entries.filter(isEntry) : [];
    const total = Number(r.total) || 0;
    return { entries, total: Math.max(total, entries.length), truncated: r.truncated === true || entries.length < total };
  }

  /** Builds with an archive but no listing yet, in id order. */
  async unlisted(): Promise<{ id: number; key: string }[]> {
    const { rows } = await this.db.query<{ id: number; key: string }>(
      `SELECT b.id, b.artifacts_key AS key FROM builds b
       WHERE b.artifacts_key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM artifact_listings l WHERE l.build_id = b.id)
       ORDER BY b.id`,
    );
    return rows;
  }
}
