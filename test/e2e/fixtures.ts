// The `test` every spec imports: Playwright's, run in one browser context per worker
// (playwright.config.ts, reuseContext), with what Playwright's reset between tests leaves behind put
// back here: the permissions a test granted and the listeners it added to the page (a `dialog`
// handler left on the shared page would answer the next test's confirm before it could). And the
// screenshot of a failed test: Playwright's screenshot: 'only-on-failure' also photographs every
// page of a reused context at each reset, passed or not (kept only on a failure): a PNG of the
// 1400×1000 page per test, ~0.13 s of Chromium's CPU and ~0.04 s of the worker's for nothing.
import { test as base, expect, type Page, type TestInfo } from '@playwright/test';

export { expect };

/** Where and how Playwright's own failure screenshot is kept: test-failed-1.png in the test's
 *  output dir, attached as "screenshot"; a page that cannot be photographed (closed, crashed) adds nothing. */
async function failureScreenshot(page: Page, testInfo: TestInfo): Promise<void> {
  const file = testInfo.outputPath('test-failed-1.png');
  try {
    await page.screenshot({ path: file, timeout: 5000, caret: 'initial' });
  } catch {
    return;
  }
  testInfo.attachments.push({ name: 'screenshot', path: file, contentType: 'image/png' });
}

type Listener = (...args: unknown[]) => unknown;
const ADDERS = ['on', 'once', 'addListener', 'prependListener'] as const;

export const test = base.extend({
  context: async ({ context }, use) => {
    await use(context);
    await context.clearPermissions();
  },
  page: async ({ page }, use, testInfo) => {
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
      if (testInfo.status !== testInfo.expectedStatus) await failureScreenshot(page, testInfo);
    }
  },
});
