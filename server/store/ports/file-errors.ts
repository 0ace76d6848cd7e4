// A file-system failure in the data dir as a StorageError kind (storage-error.ts): what the client
// should hear, without anything above the store knowing errno codes. Beside the kinds in the ports,
// as http/errors.ts also answers a raw one an upload met. Not 'unavailable' for any of them: that
// kind is an outage the job system does not log per failure, and these must be logged.
import { StorageError, type StorageTroubleKind } from './storage-error.ts';

const FILE_TROUBLE: Record<string, [StorageTroubleKind, string]> = {
  ENOSPC: ['full', 'the data dir is full; free some space and retry'],
  // A file outgrew the process's file-size limit (ulimit -f / RLIMIT_FSIZE; Node ignores SIGXFSZ).
  EFBIG: ['full', 'a file in the data dir reached the file-size limit of this process (ulimit -f); raise it and retry'],
  EDQUOT: ['full', 'the disk quota of the data dir is used up; free some space and retry'],
  EROFS: ['read-only', 'the data dir is read-only; make it writable and retry'],
  EACCES: ['read-only', 'the data dir is not writable by this process; fix its permissions and retry'],
  EPERM: ['read-only', 'the data dir is not writable by this process; fix its permissions and retry'],
  EIO: ['read-only', 'the disk of the data dir reported an I/O error; check it and retry'],
};

/** The StorageError for a file-system error code the client can do nothing about but wait or free space; undefined for any other error. */
export function fileStorageError(err: unknown): StorageError | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  const known = typeof code === 'string' && Object.hasOwn(FILE_TROUBLE, code) ? FILE_TROUBLE[code] : undefined;
  return known && new StorageError(known[0], known[1], undefined, { cause: err });
}
