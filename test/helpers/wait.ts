// Waiting in tests: every condition that crosses a process, a timer or a socket is polled with a
// deadline, so a hang fails with what was awaited instead of the test's own timeout.

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `probe` until it returns a value other than undefined/false and resolves with that value;
 * fails with `what` (and the probe's last answer) after `timeoutMs`. `what` may be a function, read
 * only on failure, to show the state that was awaited.
 */
export async function waitFor<T>(
  what: string | (() => string),
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  stepMs = 25,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) {
      const label = typeof what === 'string' ? what : what();
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${label} (last: ${JSON.stringify(v)})`);
    }
    await sleep(stepMs);
  }
}

/** Reads until `ok` holds and resolves with that reading; fails with the last reading after `timeoutMs`. */
export async function waitUntil<T>(what: string, read: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000, stepMs = 25): Promise<T> {
  let last: T | undefined;
  const found = await waitFor(
    () => `${what}: ${JSON.stringify(last)}`,
    async () => {
      last = await read();
      return ok(last) ? { v: last } : undefined;
    },
    timeoutMs,
    stepMs,
  );
  return found.v;
}
