// The file list of each build's artifacts archive (names and sizes from the zip's central
// directory), in a table of its own: list queries over builds never read it, and a build's detail
// reads one bounded row. A row belongs to one upload (its artifacts_key); a trigger drops it when
// the build's archive is replaced or removed.
import type { Db } from './db.ts';
import type { ArchiveEntry } from '../ports/build.ts';
import type { ArchiveListing, ListingSummary } from '../ports/artifact.ts';

const isEntry = (v: unknown): v is ArchiveEntry =>
  typeof v === 'object' && v !== null && typeof (v as ArchiveEntry).name === 'string' && Number.isSafeInteger((v as ArchiveEntry).size);

export class ArtifactListings {
  constructor(private readonly db: Db) {}

  /** Stores the listing of the archive `key`; false when the build's archive is no longer that one. */
  set(buildId: number, key: string, listing: ArchiveListing): boolean {
    return (
      this.db.run(
        `INSERT OR REPLACE INTO artifact_listings (build_id, artifacts_key, total, truncated, entries)
         SELECT id, artifacts_key, ?, ?, ? FROM builds WHERE id = ? AND artifacts_key = ?`,
        [listing.total, listing.truncated ? 1 : 0, JSON.stringify(listing.entries), buildId, key],
      ).changes === 1
    );
  }

  /** Count and truncation of the build's current listing; undefined while it is not listed yet. */
  summary(buildId: number): ListingSummary | undefined {
    const r = this.db.get<{ total: number; truncated: number }>('SELECT total, truncated FROM artifact_listings WHERE build_id = ?', [buildId]);
    return r && { total: Number(r.total) || 0, truncated: r.truncated === 1 };
  }

  /** The kept entries; a row that does not parse reads as no entries rather than a throw. */
  get(buildId: number): ArchiveListing | undefined {
    const r = this.db.get<{ total: number; truncated: number; entries: string }>('SELECT total, truncated, entries FROM artifact_listings WHERE build_id = ?', [buildId]);
    if (!r) return undefined;
    let entries: ArchiveEntry[] = [];
    try {
      const parsed: unknown = JSON.parse(r.entries);
      if (Array.isArray(parsed)) entries = parsed.filter(isEntry);
    } catch {
      /* unreadable: shown as an empty, truncated list */
    }
    return { entries, total: Math.max(Number(r.total) || 0, entries.length), truncated: r.truncated === 1 || entries.length < (Number(r.total) || 0) };
  }

  /** Builds with an archive but no listing yet (uploaded before a restart, or by an older version). */
  unlisted(): { id: number; key: string }[] {
    return this.db.all<{ id: number; key: string }>(
      'SELECT b.id, b.artifacts_key AS key FROM builds b WHERE b.artifacts_key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM artifact_listings l WHERE l.build_id = b.id)',
    );
  }
}
