// The seam between handlers and the domain: on SQLite every domain method answers at once,
// on PostgreSQL most answer with a promise. Handlers see one type, MaybePromise, and await it (or,
// on the trace PATCH, follow it with `then` below, which stays synchronous when the answer is a
// value: the SQLite trace path keeps no promise per part).

export type MaybePromise<T> = T | Promise<T>;

/**
 * A domain class's public shape with every method's answer loosened to MaybePromise: derived from
 * the SQLite class so a method added there appears here, and the PostgreSQL class, which implements
 * this type, fails to compile until it has it too.
 */
export type Loose<C> = {
  [K in keyof C]: C[K] extends (...args: infer A) => infer R ? (...args: A) => MaybePromise<Awaited<R>> : C[K];
};

export function isPromise<T>(v: MaybePromise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null | undefined)?.then === 'function';
}

/**
 * fn(v) now when v is a value, after it resolves when it is a promise. Not named `then`: a module
 * exporting `then` is a thenable, and `await import()` of it would call it.
 */
export function andThen<T, U>(v: MaybePromise<T>, fn: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return isPromise(v) ? v.then(fn) : fn(v);
}

/** The values, at once when none is a promise (as Promise.all, without its promise when nothing waits). */
export function allOf<T>(values: MaybePromise<T>[]): MaybePromise<T[]> {
  return values.some(isPromise) ? Promise.all(values) : (values as T[]);
}
