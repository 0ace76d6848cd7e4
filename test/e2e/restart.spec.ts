// History survives a backend restart: stop the server, start a new one on the same data dir,
// reload, and the points sampled before the restart are still drawn.
import fs from 'node:fs';
import { test, expect } from './fixtures.ts';
import { tempDir, type TestServer } from '../helpers/server.ts';
import { curves, enqueue, openSignedIn, startUiServer } from './support.ts';

let s: TestServer | undefined;
const dataDir = tempDir('jobscope-e2e-restart-');
test.afterAll(async () => {
  await s?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('history survives a backend restart', async ({ page }) => {
  s = await startUiServer({ dataDir });
  await enqueue(s, 'before_restart', 20, 60_000);
  await openSignedIn(page, s);
  await expect.poll(() => curves(page, 'chart-backlog').count()).toBeGreaterThanOrEqual(1);
  const firstBefore = Number(await page.getByTestId('chart-backlog').getAttribute('data-first-t'));
  expect(firstBefore).toBeGreaterThan(0);
  await expect(page.getByTestId('last-sample')).not.toHaveText('none yet');

  await s.close({ keepData: true });
  const stoppedAt = Date.now();
  s = await startUiServer({ dataDir });
  await openSignedIn(page, s); // a new port: a new origin, so sign in again with the link
  await expect.poll(() => curves(page, 'chart-backlog').count()).toBeGreaterThanOrEqual(1);
  await expect(page.getByTestId('last-sample')).not.toHaveText('none yet');
  // The earliest point drawn is from before the restart, the same one as before.
  const firstAfter = Number(await page.getByTestId('chart-backlog').getAttribute('data-first-t'));
  expect(firstAfter).toBeLessThan(stoppedAt);
  expect(Math.abs(firstAfter - firstBefore)).toBeLessThan(2000);
});
