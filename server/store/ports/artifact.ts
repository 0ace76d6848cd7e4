// What the artifact adapters hand back: a staged upload, an archive's listing.
import type { ArchiveEntry } from './build.ts';

export class TooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`413 Request Entity Too Large`);
  }
}

export interface StagedUpload {
  tmpPath: string;
  size: number;
}

export interface ArchiveListing {
  /** The entries kept: the first ones, within the entry and name-byte limits at listing time. */
  entries: ArchiveEntry[];
  /** Files in the archive (directories not counted), also those not kept. */
  total: number;
  truncated: boolean;
}

export interface ListingSummary {
  total: number;
  truncated: boolean;
}
