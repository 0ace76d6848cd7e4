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

/**
 * Said when a change was sent and the engine went away before it answered: it may or may not have
 * been made. A client that repeats it blindly may make it twice (an enqueue), so it is told to look.
 */
export const OUTCOME_UNKNOWN = 'a change sent just then may or may not have been made: check before repeating it';

export const isStorageError = (err: unknown): err is StorageError => err instanceof StorageError;
