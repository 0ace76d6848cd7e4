// The database failing under a request is storage trouble, not a bug: on SQLite a full or read-only
// file answers 507/503 with what to do (http/errors.ts describeError reads SQLite's messages), and a
// server on PostgreSQL must answer the same, not a 500. PostgreSQL says what went wrong in its
// SQLSTATE; the domain's methods are wrapped (domain.ts) so such an error reaches the handler as the
// ApiError a client can act on. Errors of files (traces, artifacts) and of the client's own body
// carry no SQLSTATE and pass unchanged.
import { ApiError } from '../../http/errors.ts';
import { isPromise } from '../../domain/maybe-promise.ts';

const FULL = '507 Insufficient Storage - the database is full (PostgreSQL: disk full); free some space on the database server and retry';
const BUSY = '503 Service Unavailable - the database has no room for this request now (PostgreSQL: out of memory or connection slots); retry';
const READ_ONLY = '503 Service Unavailable - the database is read-only (PostgreSQL: a standby, or read-only transactions); point --database at the primary and retry';
const GONE = '503 Service Unavailable - the connection to the database was lost or it is shutting down; retry once it is back';

/** The SQLSTATE of a PostgreSQL server error: five characters, digits and capitals. */
function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** The answer for a database failure that is no fault of the request, or undefined for any other error. */
export function pgStorageError(err: unknown): ApiError | undefined {
  const state = sqlState(err);
  if (state === '53100') return new ApiError(507, FULL);
  if (state?.startsWith('53')) return new ApiError(503, BUSY);
  if (state === '25006') return new ApiError(503, READ_ONLY);
  if (state?.startsWith('08') || state === '57P01' || state === '57P02' || state === '57P03') return new ApiError(503, GONE);
  // node-postgres's own words when the server closed the session under a query.
  if (err instanceof Error && !state && /^Connection terminated/.test(err.message)) return new ApiError(503, GONE);
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
