// The database failing under a request is storage trouble, not a bug: on SQLite a full or read-only
// file answers 507/503 with what to do (http/errors.ts describeError reads SQLite's messages), and a
// server on PostgreSQL must answer the same, not a 500. PostgreSQL says what went wrong in its
// SQLSTATE (http/errors.ts pgStorageError reads it, so describeError answers it wherever it is thrown:
// the job backend, the monitor); the domain's methods are also wrapped (domain.ts) so such an error
// reaches the handler as the ApiError a client can act on. Errors of files (traces, artifacts) and of the client's own body
// carry no SQLSTATE and pass unchanged.
import { pgStorageError } from '../../http/errors.ts';
import { isPromise } from '../../domain/maybe-promise.ts';

export { pgStorageError };

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
