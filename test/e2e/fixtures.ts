// The `test` every spec imports: Playwright's, run in one browser context per worker
// (playwright.config.ts, reuseContext), with what Playwright's reset between tests leaves behind put
// back here: the permissions a test granted and the listeners it added to the page (a `dialog`
// handler left on the shared page would answer the next test's confirm before it could).
import { test as base, expect } from '@playwright/test';

export { expect };

type Listener = (...args: unknown[]) => unknown;
const ADDERS = ['on', 'once', 'addListener', 'prependListener'] as const;

export const test = base.extend({
  context: async ({ context }, use) => {
    await use(context);
    await context.clearPermissions();
  },
  page: async ({ page }, use) => {
    const added: [string, Listener][] = [];
    const emitter = page as unknown as Record<(typeof ADDERS)[number], (event: string, listener: Listener) => unknown> & { off(event: string, listener: Listener): unknown };
    for (const name of ADDERS) {
      const original = emitter[name];
      emitter[name] = function (this: unknown, event: string, listener: Listener) {
        added.push([event, listener]);
        return original.call(this, event, listener);
      };
    }
    try {
      await use(page);
    } finally {
      for (const name of ADDERS) delete (emitter as Partial<typeof emitter>)[name];
      for (const [event, listener] of added) emitter.off(event, listener);
    }
  },
});
