// The seam between handlers and the domain: on SQLite every domain method answers at once,
// on PostgreSQL most answer with a promise. Handlers see one type, MaybePromise, and await it (or,
// on the trace PATCH, follow it with `then` below, which stays synchronous when the answer is a
// value: the SQLite trace path keeps no promise per part).

export type MaybePromise<T> = T | Promise<T>;

/**
 * C's public shape with every method's answer loosened to MaybePromise: what callers see of a domain
 * class, and what the domain sees of a port (a synchronous SQLite adapter and an asynchronous
 * PostgreSQL one both fit, and one that lacks a method fails to compile).
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

/** fn over items one after another (each waits for the one before), at once while no answer is a promise. */
export function inOrder<T, U>(items: readonly T[], fn: (item: T) => MaybePromise<U>): MaybePromise<U[]> {
  const out: U[] = [];
  for (let i = 0; i < items.length; i++) {
    const v = fn(items[i]!);
    if (isPromise(v)) return finishInOrder(items, fn, out, i, v);
    out.push(v);
  }
  return out;
}

async function finishInOrder<T, U>(items: readonly T[], fn: (item: T) => MaybePromise<U>, out: U[], from: number, pending: Promise<U>): Promise<U[]> {
  out.push(await pending);
  for (let i = from + 1; i < items.length; i++) out.push(await fn(items[i]!));
  return out;
}

/** fn's answer, or onError's for what it throws or rejects with (synchronously when fn answers at once). */
export function rescue<T>(fn: () => MaybePromise<T>, onError: (err: unknown) => MaybePromise<T>): MaybePromise<T> {
  let v: MaybePromise<T>;
  try {
    v = fn();
  } catch (err) {
    return onError(err);
  }
  return isPromise(v) ? v.catch(onError) : v;
}
