// The database failing under a request is storage trouble, not a bug: on SQLite a full or read-only
// file answers 507/503 with what to do, and a server on PostgreSQL must answer the same, not a 500.
// What went wrong is read here, at the adapter boundary, and raised as a StorageError kind
// (store/storage-error.ts) that http/errors.ts answers without knowing PostgreSQL: the SQLSTATE of
// a server error, the socket's code when the server cannot be reached, and node-postgres's own
// words for a session cut under a query or a pool that could not hand out a connection in time.
//
// The boundary is the pool (storageErrorsOn): every statement of the store, the domain's, the job
// backend's and the monitor's alike, goes through it or one of its clients. Errors of files (traces,
// artifacts), constraints and the client's own input carry none of these marks and pass unchanged.
import type { Pool, PoolClient } from 'pg';
import { OUTCOME_UNKNOWN, StorageError } from '../ports/storage-error.ts';
import { isPromise } from '../../domain/maybe-promise.ts';

/**
 * Retry-After for an outage: a restart or a failover takes seconds. Long enough that a fleet of
 * runners does not hammer a database coming back, short enough that they resume soon after.
 */
export const PG_RETRY_AFTER_S = 5;
/** Retry-After when the database is up but out of room for this request now (memory, connection slots). */
const BUSY_RETRY_AFTER_S = 2;
/** Retry-After for a read-only database: an operator has to act, so no quick retry. */
const READ_ONLY_RETRY_AFTER_S = 30;

const GONE = 'the connection to the database was lost or it is shutting down; retry once it is back';
/** The session went away under a statement already sent: a commit in flight may have been made. */
const GONE_MID_STATEMENT = `the connection to the database was lost under this request (${OUTCOME_UNKNOWN}); retry once it is back`;

/** Socket codes of a server that was never reached: nothing was sent. */
const NOT_REACHED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** The SQLSTATE of a PostgreSQL server error: five characters, digits and capitals. */
function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** The socket's codes for a server that cannot be reached or went away. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

function fromSqlState(state: string, cause: unknown): StorageError | undefined {
  const say = (kind: StorageError['kind'], message: string, retryAfterS?: number) => new StorageError(kind, message, retryAfterS, { cause });
  if (state === '53100') return say('full', 'the database is full (PostgreSQL: disk full); free some space on the database server and retry');
  if (state.startsWith('53')) return say('busy', 'the database has no room for this request now (PostgreSQL: out of memory or connection slots); retry', BUSY_RETRY_AFTER_S);
  if (state === '25006') return say('read-only', 'the database is read-only (PostgreSQL: a standby, or read-only transactions); point --database at the primary and retry', READ_ONLY_RETRY_AFTER_S);
  // 08: connection exceptions; 57P01-03: shut down by an admin, a crash, or starting up.
  // 57P03 refuses a new session (nothing ran); 57P01/57P02 end a session that may have been committing.
  if (state.startsWith('08') || state === '57P03') return say('unavailable', GONE, PG_RETRY_AFTER_S);
  if (state === '57P01' || state === '57P02') return say('unavailable', GONE_MID_STATEMENT, PG_RETRY_AFTER_S);
  // The server canceled the statement: its statement_timeout ran out (or an operator canceled it).
  if (state === '57014') {
    return say('unavailable', 'the database did not finish this request within the statement timeout (--database-statement-timeout-ms); retry', PG_RETRY_AFTER_S);
  }
  return undefined;
}

/** The StorageError for a PostgreSQL failure that is no fault of the request, or undefined for any other error. */
export function pgStorageError(err: unknown): StorageError | undefined {
  if (err instanceof StorageError || !(err instanceof Error)) return undefined;
  const state = sqlState(err);
  if (state) return fromSqlState(state, err);
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) {
    if (NOT_REACHED.has(code)) return new StorageError('unavailable', `the database cannot be reached (${code}); retry once it is back`, PG_RETRY_AFTER_S, { cause: err });
    return new StorageError('unavailable', `the connection to the database broke (${code}) under this request (${OUTCOME_UNKNOWN}); retry once it is back`, PG_RETRY_AFTER_S, { cause: err });
  }
  // node-postgres's words: the session closed under a query ("Connection terminated unexpectedly",
  // "… due to connection timeout"), a client left unusable by that, a statement past the client's
  // query_timeout, and the pool's wait for a connection running past connectionTimeoutMillis.
  if (/^Connection terminated/.test(err.message)) return new StorageError('unavailable', GONE_MID_STATEMENT, PG_RETRY_AFTER_S, { cause: err });
  if (/not queryable|Connection ended/.test(err.message)) return new StorageError('unavailable', GONE, PG_RETRY_AFTER_S, { cause: err });
  if (err.message === 'Query read timeout') {
    // The client stopped waiting; the server may still finish (and commit) the statement.
    return new StorageError('unavailable', `the database did not answer this request within the statement timeout (--database-statement-timeout-ms; ${OUTCOME_UNKNOWN}); retry`, PG_RETRY_AFTER_S, {
      cause: err,
    });
  }
  if (/^timeout exceeded when trying to connect/.test(err.message)) {
    return new StorageError(
      'unavailable',
      'no database connection could be had within the connect timeout (--database-connect-timeout-ms): the database is down or slow, or every connection is busy; retry',
      PG_RETRY_AFTER_S,
      { cause: err },
    );
  }
  return undefined;
}

function translate(err: unknown): never {
  throw pgStorageError(err) ?? err;
}

/**
 * The object with each method's rejected promise passed through pgStorageError. Methods run on
 * the object itself (calls between its own methods are not wrapped twice); a synchronous answer
 * or throw passes unchanged.
 */
export function withStorageErrors<T extends object>(target: T): T {
  return new Proxy(target, {
    get(t, key) {
      const value: unknown = Reflect.get(t, key, t);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const out: unknown = (value as (...a: unknown[]) => unknown).apply(t, args);
        return isPromise(out as Promise<unknown> | undefined) ? (out as Promise<unknown>).catch(translate) : out;
      };
    },
  });
}

/** The pool with every statement's failure, on it or on a client it hands out, passed through pgStorageError. */
export function storageErrorsOn(pool: Pool): Pool {
  const wrapped = withStorageErrors(pool);
  return new Proxy(wrapped, {
    get(t, key) {
      if (key !== 'connect') return Reflect.get(t, key);
      return (): Promise<PoolClient> => pool.connect().then((client) => withStorageErrors(client), translate);
    },
  });
}
