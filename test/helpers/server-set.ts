// The servers of one vitest file, closed for it (apart from server.ts: Playwright's specs import that).
import { afterAll, afterEach } from 'vitest';
import type { ServerDeps } from '../../server/app.ts';
import { startServer, type ServerOverrides, type TestServer } from './server.ts';

export interface ServerSet {
  /** Starts a server with the set's defaults under `overrides`; it is closed with the set. */
  start(overrides?: ServerOverrides, deps?: ServerDeps): Promise<TestServer>;
  /** Closes one server now (a restart on its data dir keeps the data) and leaves it out of the set. */
  close(s: TestServer, opts?: { keepData?: boolean }): Promise<void>;
  /** Closes every server still open, the newest first. */
  closeAll(): Promise<void>;
  /** The servers still open, oldest first. */
  readonly list: readonly TestServer[];
}

/**
 * The servers of one test file, closed after each test (`after: 'all'`: once, after the file). A file
 * whose teardown must close them at a given point (before flushing a shared Redis) calls closeAll there.
 * `defaults` may be a function: read at each start, it can name what a beforeAll started.
 */
export function useServers(defaults: ServerOverrides | (() => ServerOverrides) = {}, after: 'each' | 'all' = 'each'): ServerSet {
  const list: TestServer[] = [];
  const set: ServerSet = {
    list,
    async start(overrides = {}, deps = {}) {
      const s = await startServer({ ...(typeof defaults === 'function' ? defaults() : defaults), ...overrides }, deps);
      list.push(s);
      return s;
    },
    async close(s, opts = {}) {
      list.splice(list.indexOf(s), 1);
      await s.close(opts);
    },
    async closeAll() {
      for (const s of list.splice(0).reverse()) await s.close();
    },
  };
  (after === 'each' ? afterEach : afterAll)(() => set.closeAll());
  return set;
}
