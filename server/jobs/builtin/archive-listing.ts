// Reads an uploaded artifacts archive's zip central directory (names and sizes, nothing
// decompressed) into the build record, so the UI can show the files without downloading the archive.
import yauzl from 'yauzl';
import type { Store } from '../../store/index.ts';
import type { ArchiveEntry } from '../../store/builds.ts';
import type { JobKind } from '../types.ts';

/** More entries than this are cut off: the listing is for people, and is kept in one row. */
const MAX_ENTRIES = 10_000;

class NotAZip extends Error {}

export function readZipListing(file: string): Promise<ArchiveEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true, strictFileNames: false, validateEntrySizes: false }, (err, zip) => {
      if (err || !zip) {
        const code = (err as NodeJS.ErrnoException | null)?.code;
        return reject(code ? err : new NotAZip(err?.message ?? 'not a zip archive'));
      }
      const out: ArchiveEntry[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('/')) out.push({ name: entry.fileName, size: entry.uncompressedSize });
        if (out.length >= MAX_ENTRIES) {
          zip.close();
          resolve(out);
        } else zip.readEntry();
      });
      zip.on('end', () => resolve(out));
      zip.on('error', (e: Error) => reject(new NotAZip(e.message)));
      zip.readEntry();
    });
  });
}

export function archiveListingJob(store: Store): JobKind {
  return {
    class: 'ArtifactsListingWorker',
    queue: 'archive_listing',
    retry: 3,
    async perform(args) {
      const buildId = Number(args.build_id);
      const key = String(args.key);
      // A newer upload (or an expiry) may have replaced this archive meanwhile: nothing to do then.
      if (store.builds.byId(buildId)?.artifacts_key !== key) return;
      let listing: ArchiveEntry[];
      try {
        listing = await readZipListing(store.artifacts.pathOf(key));
      } catch (err) {
        if (store.builds.byId(buildId)?.artifacts_key !== key) return;
        // Not a zip (runners may upload anything): an empty listing, since retrying cannot help.
        if (err instanceof NotAZip) listing = [];
        else throw err;
      }
      store.db.tx(() => store.builds.setArtifactsListing(buildId, key, listing));
    },
  };
}
