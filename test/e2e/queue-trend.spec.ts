// Each queue's trend, as an on-call engineer works it out: growing by N a minute, or draining and
// empty in about M minutes at that pace, fitted to the last minutes of samples (every 500 ms here).
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { enqueue, openSignedIn, startUiServer } from './support.ts';

let s: TestServer;
test.beforeAll(async () => {
  // One worker held by a long job: whatever is enqueued next stays in its queue.
  s = await startUiServer({ jobConcurrency: 1 });
  await enqueue(s, 'trend_block', 1, 600_000);
});
test.afterAll(async () => {
  await s?.close();
});

const trendOf = (page: import('@playwright/test').Page, queue: string) => page.locator(`[data-testid="queue-row"][data-queue="${queue}"]`).getByTestId('queue-trend');

test('the queues table says which queue grows, by how much a minute, and which holds steady', async ({ page }) => {
  await enqueue(s, 'trend_flat', 5);
  for (let i = 0; i < 6; i++) {
    await enqueue(s, 'trend_up', 10);
    await new Promise((r) => setTimeout(r, 700));
  }
  await openSignedIn(page, s);
  await expect(trendOf(page, 'trend_up')).toHaveText(/^growing by \d+\/min$/);
  await expect(trendOf(page, 'trend_flat')).toHaveText('steady');
  await expect(page.getByRole('columnheader', { name: 'Trend (5 min)' })).toBeVisible();

  await page.locator('[data-testid="queue-row"][data-queue="trend_up"]').getByTestId('queue-link').click();
  await expect(page.getByTestId('queue-facts').getByTestId('queue-trend')).toHaveText(/^growing by \d+\/min$/);
});

test('a draining queue says when it will be empty at this pace', async ({ page }) => {
  const d = await startUiServer({ jobConcurrency: 1 });
  try {
    await enqueue(d, 'trend_down', 40, 250);
    await openSignedIn(page, d);
    await expect(trendOf(page, 'trend_down')).toHaveText(/^draining [\d.]+\/min, empty in ~\d+ min$/);
  } finally {
    await d.close();
  }
});
