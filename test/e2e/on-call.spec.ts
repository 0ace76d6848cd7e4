// What an on-call reader compares with Sidekiq Web: a queue keeps its colour when a bigger queue
// appears; a paused dashboard holds still and says so; the Dead page's time column is the death
// (the set's score), the first failure in its tooltip.
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis } from '../helpers/redis.ts';
import { sidekiqRuby } from '../helpers/sidekiq-oracle.ts';
import { curves, enqueue, openSignedIn, startUiServer } from './support.ts';

let s: TestServer;
test.beforeAll(async () => {
  // One worker held by a long job: whatever is enqueued next stays in its queue as backlog.
  s = await startUiServer({ jobConcurrency: 1 });
  await enqueue(s, 'oncall_block', 1, 600_000);
});
test.afterAll(async () => {
  await s?.close();
});

test.use({ timezoneId: 'UTC' });

const colourOf = (page: import('@playwright/test').Page, queue: string) =>
  curves(page, 'chart-backlog').and(page.locator(`[data-series="${queue}"]`)).getAttribute('data-color');

test('a queue keeps its colour when a bigger queue appears', async ({ page }) => {
  await enqueue(s, 'oncall_small', 2);
  await openSignedIn(page, s);
  await expect(curves(page, 'chart-backlog').and(page.locator('[data-series="oncall_small"]'))).toHaveCount(1);
  const before = await colourOf(page, 'oncall_small');
  await enqueue(s, 'oncall_big', 20);
  await expect(curves(page, 'chart-backlog').and(page.locator('[data-series="oncall_big"]'))).toHaveCount(1);
  expect(await colourOf(page, 'oncall_small')).toBe(before);
  expect(await colourOf(page, 'oncall_big')).not.toBe(before);
  // A reload (a restart) keeps them: the colours are remembered, not recomputed from the ranking.
  await page.reload();
  await expect(curves(page, 'chart-backlog').and(page.locator('[data-series="oncall_small"]'))).toHaveCount(1);
  expect(await colourOf(page, 'oncall_small')).toBe(before);
});

test('a paused dashboard holds still and says so; Refresh waits for live', async ({ page }) => {
  await openSignedIn(page, s);
  const last = page.getByTestId('last-sample');
  await expect(last).not.toHaveText('none yet');
  await expect(page.getByTestId('health-dot')).toHaveAttribute('data-state', 'ok');
  await page.getByTestId('live-toggle').click();
  await expect(page.getByTestId('live-state')).toContainText(/Paused since \d\d:\d\d:\d\d/);
  await expect(page.getByTestId('health-dot')).toHaveAttribute('data-state', 'paused');
  await expect(page.getByTestId('refresh')).toBeDisabled();
  const held = await last.innerText();
  // Samples go on every 500 ms and the page keeps asking for the connection list while paused: it
  // holds still once it has received a sample newer than any it could hold, and rendered that.
  const embeddedAt = (list: { id: string; last_sample_at: string | null }[]) => list.find((c) => c.id === 'embedded')?.last_sample_at ?? '';
  const heldAtMost = embeddedAt((await http(`${s.url}/api/app/connections`, { token: s.adminToken })).body);
  const newer = () =>
    page.waitForResponse(async (r) => new URL(r.url()).pathname === '/api/app/connections' && r.request().method() === 'GET' && r.ok() && embeddedAt(await r.json()) > heldAtMost);
  await newer();
  await newer(); // the first one's render is done by the time the next poll has come back
  await expect(last).toHaveText(held);
  await page.getByTestId('live-toggle').click();
  await expect(page.getByTestId('health-dot')).toHaveAttribute('data-state', 'ok');
  await expect(last).not.toHaveText(held);
  await expect(page.getByTestId('refresh')).toBeEnabled();
});

test('the Dead page shows when a job died, its failure time in the tooltip', async ({ page }) => {
  const redis = await startRedis();
  try {
    // Died 2026-03-04 05:06:07 UTC, first failed three weeks before.
    const died = Date.UTC(2026, 2, 4, 5, 6, 7) / 1000;
    await sidekiqRuby(
      redis.url,
      `Sidekiq.redis { |c| c.zadd("dead", ${died}, Sidekiq.dump_json("class" => "ExportJob", "queue" => "exports", "args" => [42], "jid" => "d" * 24, "error_class" => "Timeout::Error", "error_message" => "too long", "failed_at" => ${died - 21 * 86400}, "retry_count" => 25)) }`,
    );
    const c = await http(`${s.url}/api/app/connections`, { json: { name: 'On-call Sidekiq', kind: 'sidekiq', redis_url: redis.url }, token: s.adminToken });
    expect(c.status).toBe(201);
    await openSignedIn(page, s, '/dead');
    await page.getByTestId('connection-picker').selectOption({ label: 'On-call Sidekiq' });
    const row = page.locator('[data-testid="job-row"][data-job="dddddddddddddddddddddddd"]');
    await expect(row.locator('[data-col="died"]')).toHaveText(/04 Mar.*05:06:07/);
    await expect(row.locator('[data-col="died"] span')).toHaveAttribute('title', /First failed 11 Feb.*05:06:07/);
    await expect(page.getByRole('columnheader', { name: 'Died at' })).toBeVisible();
  } finally {
    await redis.stop();
  }
});
