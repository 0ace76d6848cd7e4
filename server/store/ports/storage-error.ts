// Storage trouble as kinds, raised by whichever adapter meets it (SQLite, files, PostgreSQL, Redis)
// and answered in one place (http/errors.ts): a client learns what happened and when to come back,
// and no adapter's own error text or code has to be known above the store.
export type StorageTroubleKind =
  /** Out of space: 507. */
  | 'full'
  /** Writes refused (a read-only disk or a standby): 503. */
  | 'read-only'
  /** The engine is up but has no room for this request now (memory, connection slots): 503. */
  | 'busy'
  /** The engine cannot be reached, is restarting, or did not answer within its timeout: 503. */
  | 'unavailable';

export class StorageError extends Error {
  override readonly name = 'StorageError';
  constructor(
    readonly kind: StorageTroubleKind,
    /** What happened and what to do, in one sentence, without the status line. */
    message: string,
    /** Seconds after which a retry is worth it, sent as Retry-After (503s). */
    readonly retryAfterS?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const isStorageError = (err: unknown): err is StorageError => err instanceof StorageError;

/** File-system error codes that are storage trouble, as their kind and what to do (what a client reads). */
const FILE_TROUBLE: Record<string, [StorageTroubleKind, string]> = {
  ENOSPC: ['full', 'the data dir is full; free some space and retry'],
  // A file outgrew the process's file-size limit (ulimit -f / RLIMIT_FSIZE; Node ignores SIGXFSZ).
  EFBIG: ['full', 'a file in the data dir reached the file-size limit of this process (ulimit -f); raise it and retry'],
  EDQUOT: ['full', 'the disk quota of the data dir is used up; free some space and retry'],
  EROFS: ['read-only', 'the data dir is read-only; make it writable and retry'],
  EACCES: ['read-only', 'the data dir is not writable by this process; fix its permissions and retry'],
  EPERM: ['read-only', 'the data dir is not writable by this process; fix its permissions and retry'],
  EIO: ['unavailable', 'the disk of the data dir reported an I/O error; check it and retry'],
};

/** A file-system error (by its code) as the StorageError it means, or undefined when it is no storage trouble. */
export function fileTrouble(err: unknown): StorageError | undefined {
  const code = (err as { code?: unknown })?.code;
  const known = typeof code === 'string' && Object.hasOwn(FILE_TROUBLE, code) ? FILE_TROUBLE[code] : undefined;
  return known ? new StorageError(known[0], known[1], undefined, { cause: err }) : undefined;
}
