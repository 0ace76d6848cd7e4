// The `test` every spec imports: Playwright's, run in one browser context per worker
// (playwright.config.ts, reuseContext), with what Playwright's reset between tests leaves behind put
// back here: the permissions a test granted and the listeners it added to the page (a `dialog`
// handler left on the shared page would answer the next test's confirm before it could). And the
// screenshot of a failed test: Playwright's screenshot: 'only-on-failure' also photographs every
// page of a reused context at each reset, passed or not (kept only on a failure): a PNG of the
// 1400×1000 page per test, ~0.13 s of Chromium's CPU and ~0.04 s of the worker's for nothing.
import fs from 'node:fs';
import path from 'node:path';
import { test as base, expect, type Page, type TestInfo } from '@playwright/test';
import { TreeCpu } from '../helpers/tree-cpu.ts';

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

/** JOBSCOPE_FILE_CPU=<file>: as for vitest (test/helpers/file-cpu.ts), one JSON line per spec file
 *  appended to <file>: the CPU its worker and the worker's descendants (the browser, its renderers;
 *  sampled, test/helpers/tree-cpu.ts says how) spent from the end of the worker's previous file (or the worker's start: its browser's launch
 *  counts as its first file's) to the end of this one, its beforeAll's server start included. */
const cpuOut = process.env.JOBSCOPE_FILE_CPU;
type FileMark = { file?: string; cpu: number; wall: number; lastCpu: number; lastWall: number; tree?: TreeCpu };

function writeFileCpu(mark: FileMark, cpu: number, wall: number): void {
  if (!cpuOut || !mark.file) return;
  const line = { file: path.relative(process.cwd(), mark.file), runner: 'playwright', cpu_s: +(cpu - mark.cpu).toFixed(2), wall_s: +((wall - mark.wall) / 1000).toFixed(2) };
  fs.appendFileSync(cpuOut, `${JSON.stringify(line)}\n`);
}

export const test = base.extend<{ fileCpu: void }, { fileMark: FileMark }>({
  fileMark: [
    async ({}, use) => {
      const tree = cpuOut ? new TreeCpu() : undefined;
      const now = { cpu: tree?.total() ?? 0, wall: performance.now() };
      const mark: FileMark = { ...now, lastCpu: now.cpu, lastWall: now.wall, tree };
      await use(mark);
      if (tree) writeFileCpu(mark, tree.total(), performance.now());
      tree?.stop();
    },
    { scope: 'worker', auto: true },
  ],
  fileCpu: [
    async ({ fileMark }, use, testInfo) => {
      const tree = fileMark.tree;
      if (!tree) return use();
      if (fileMark.file !== testInfo.file) {
        writeFileCpu(fileMark, fileMark.lastCpu, fileMark.lastWall);
        Object.assign(fileMark, { file: testInfo.file, cpu: fileMark.lastCpu, wall: fileMark.lastWall });
      }
      await use();
      Object.assign(fileMark, { lastCpu: tree.total(), lastWall: performance.now() });
    },
    { auto: true },
  ],
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
