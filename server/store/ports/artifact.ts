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

/** An upload being staged, fed chunk by chunk (store/files/upload-sink.ts). */
export interface ArtifactUpload {
  /** Takes a chunk; false: pause the source until the drain hook. Throws TooLargeError at the limit. */
  write(chunk: Buffer): boolean;
  /** Every byte written (and fsynced with --fsync); the staged file. On failure the file is gone. */
  finish(): Promise<StagedUpload>;
  /** Closes (after any write in flight) and removes the temp file. */
  abort(): Promise<void>;
}

export interface ArtifactUploadHooks {
  drain(): void;
  error(err: Error): void;
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
