// SQLite's storage trouble as StorageError kinds (storage-error.ts), so nothing above the store has
// to know SQLite's messages. The WebAssembly build reports only a message, no code to switch on.
import { StorageError } from '../ports/storage-error.ts';

/** The kind of a SQLite failure the client can do nothing about but wait or free space; undefined for any other error. */
export function sqliteStorageError(err: unknown): StorageError | undefined {
  const message = String((err as { message?: unknown } | null | undefined)?.message);
  if (/SQLITE_FULL|database or disk is full/i.test(message)) return new StorageError('full', 'the data dir is full; free some space and retry', undefined, { cause: err });
  if (/SQLITE_READONLY|readonly database/i.test(message)) return new StorageError('read-only', 'the data dir is read-only; make it writable and retry', undefined, { cause: err });
  // A full disk and a failing one look alike here ("disk I/O error"). Not 'unavailable': that kind
  // is an outage the job system does not log per failure, and a failing disk must be logged.
  if (/disk I\/O error|SQLITE_IOERR/i.test(message)) {
    return new StorageError('read-only', 'the database in the data dir could not be written (disk full, read-only or failing); free some space or make it writable, then retry', undefined, { cause: err });
  }
  return undefined;
}
