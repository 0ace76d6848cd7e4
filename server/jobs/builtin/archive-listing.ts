// Reads an uploaded artifacts archive's zip central directory (names and sizes, nothing
// decompressed) into its listing (store/sqlite/artifact-listings.ts), so the UI can show the files without
// downloading the archive. yauzl is loaded on the first archive listed: an idle server, and one that
// never receives artifacts, does not hold it.
import type yauzl from 'yauzl';
import type { BuildsDomain } from '../../domain/builds.ts';
import type { ArchiveEntry } from '../../store/ports/build.ts';
import type { ArchiveListing } from '../../store/ports/artifact.ts';
import type { JobKind } from '../types.ts';

/**
 * How much of a listing is kept: it is for people, and a zip may hold millions of entries with
 * names up to 64 KiB each. Entries past either bound are counted (`total`) but not kept.
 */
export interface ListingLimits {
  maxEntries: number;
  maxNameBytes: number;
}

class NotAZip extends Error {}

export async function readZipListing(file: string, limits: ListingLimits): Promise<ArchiveListing> {
  const { default: zipReader } = await import('yauzl');
  return new Promise((resolve, reject) => {
    zipReader.open(file, { lazyEntries: true, autoClose: true, strictFileNames: false, validateEntrySizes: false }, (err, zip) => {
      if (err || !zip) {
        const code = (err as NodeJS.ErrnoException | null)?.code;
        return reject(code ? err : new NotAZip(err?.message ?? 'not a zip archive'));
      }
      const entries: ArchiveEntry[] = [];
      let total = 0;
      let nameBytes = 0;
      let truncated = false;
      // Reading on past the limits only counts: the central directory is at most the archive's
      // size (itself bounded by --max-artifact-mb), and nothing is decompressed.
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('/')) {
          total++;
          const bytes = Buffer.byteLength(entry.fileName);
          if (!truncated && entries.length < limits.maxEntries && nameBytes + bytes <= limits.maxNameBytes) {
            entries.push({ name: entry.fileName, size: entry.uncompressedSize });
            nameBytes += bytes;
          } else truncated = true;
        }
        zip.readEntry();
      });
      zip.on('end', () => resolve({ entries, total, truncated }));
      zip.on('error', (e: Error) => reject(new NotAZip(e.message)));
      zip.readEntry();
    });
  });
}

export function archiveListingJob(builds: BuildsDomain, limits: ListingLimits): JobKind {
  return {
    class: 'ArtifactsListingWorker',
    queue: 'archive_listing',
    retry: 3,
    async perform(args) {
      const buildId = Number(args.build_id);
      const key = String(args.key);
      // Replaced meanwhile by a newer upload (or an expiry), or already listed (a row always belongs
      // to the current archive: replacing it drops the row): nothing to do then.
      const file = await builds.archiveToList(buildId, key);
      if (file === undefined) return;
      let listing: ArchiveListing;
      try {
        listing = await readZipListing(file, limits);
      } catch (err) {
        if (!(await builds.isCurrentArchive(buildId, key))) return;
        // Not a zip (runners may upload anything): an empty listing, since retrying cannot help.
        if (err instanceof NotAZip) listing = { entries: [], total: 0, truncated: false };
        else throw err;
      }
      await builds.recordListing(buildId, key, listing);
    },
  };
}
