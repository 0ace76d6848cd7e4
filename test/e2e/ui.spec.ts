// The dashboard's controls against a server under the demo load (simulated processes, 300 queues):
// the README screenshot, the virtualized queues table, pins, vanished processes, theme, glossary,
// live/pause, ranges, CSV export, and the sign-in form.
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { compound, curves, openSignedIn, screenshot, startUiServer } from './support.ts';

let s: TestServer;
const load = (json: Record<string, unknown>) => http(`${s.url}/api/v3/sim/load`, { method: 'PUT', json, token: s.adminToken });

test.beforeAll(async () => {
  s = await startUiServer();
  const r = await load({ queues: 300, processes: 4, concurrency: 5, rate: 80, burst_every_s: 4, burst_size: 120, seed: 7 });
  expect(r.status).toBe(200);
});
test.afterAll(async () => {
  await s?.close();
});

// First: it leaves nothing behind (the chosen queues are the page's, not remembered), and the
// history it gives the server time to gather is what the next test's README screenshot waits for.
test('the queue picker replaces the top 8 with chosen queues', async ({ page }) => {
  await openSignedIn(page, s);
  await expect.poll(() => page.locator('[data-testid="chart-backlog"] .legend-item').count()).toBe(8);
  await page.getByTestId('queue-picker').locator('summary').click();
  const req = page.waitForRequest((r) => r.url().includes('/history?') && r.url().includes('queues=synthetic_5'));
  await page.getByTestId('queue-picker').getByLabel('synthetic_5', { exact: true }).check();
  await req;
  await expect(page.locator('[data-testid="chart-backlog"] .legend-item')).toHaveCount(1);
  await expect(page.locator('[data-testid="chart-backlog"] .legend-item')).toHaveAttribute('data-series', 'synthetic_5');
  await expect(page.getByTestId('queue-picker').locator('summary')).toHaveText('1 queue chosen');
});

test('under load: charts, KPIs and the README screenshot', async ({ page }, testInfo) => {
  await openSignedIn(page, s);
  await expect.poll(() => curves(page, 'chart-backlog').count()).toBeGreaterThanOrEqual(3);
  await expect.poll(async () => Number(await page.getByTestId('chart-backlog').getAttribute('data-points'))).toBeGreaterThanOrEqual(8);
  await expect(curves(page, 'chart-rates')).toHaveCount(2);
  // For screen readers the canvas names what it drew.
  await expect(page.locator('[data-testid="chart-rates"] canvas.series-canvas')).toHaveAttribute('aria-label', 'Chart lines for 2 series: processed/s, failed/s');
  await expect(page.getByTestId('process-row')).toHaveCount((await compound(s)).processes.length);
  // For a picture worth showing, a few more samples than the 8 above (it slept 3 s here, ~2 more):
  // a condition, so no wait once the history is that long already.
  await expect.poll(async () => Number(await page.getByTestId('chart-backlog').getAttribute('data-points'))).toBeGreaterThanOrEqual(10);
  await screenshot(page, testInfo, 'dashboard');
});

test('the queues table virtualizes hundreds of rows, filters, sorts and pins', async ({ page }) => {
  await openSignedIn(page, s);
  await expect.poll(async () => Number(await page.getByTestId('queues-count').innerText())).toBeGreaterThanOrEqual(300);
  const rendered = await page.getByTestId('queue-row').count();
  expect(rendered).toBeGreaterThan(5);
  expect(rendered).toBeLessThan(60); // only the visible rows (and a few more) are in the DOM

  await page.getByTestId('queues-sort-name').click();
  const names = await page.getByTestId('queue-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-queue')!));
  expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));

  await page.getByTestId('queues-filter').fill('synthetic_2');
  const filtered = await page.getByTestId('queue-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-queue')!));
  expect(filtered.length).toBeGreaterThan(0);
  expect(filtered.every((n) => n.includes('synthetic_2'))).toBe(true);
  await page.getByTestId('queues-filter').fill('');

  // Pin the last queue by name order (only in the DOM once scrolled to): it moves to the top, and
  // stays pinned after a reload.
  const lastName = Object.keys((await compound(s)).queues).sort((a, b) => a.localeCompare(b)).pop()!;
  const vbody = page.locator('.vbody');
  await expect(page.locator(`[data-testid="queue-row"][data-queue="${lastName}"]`)).toHaveCount(0);
  await vbody.evaluate((e) => (e.scrollTop = e.scrollHeight));
  const last = page.locator(`[data-testid="queue-row"][data-queue="${lastName}"]`);
  await last.getByTestId('queue-pin').click();
  await vbody.evaluate((e) => (e.scrollTop = 0));
  await expect(page.getByTestId('queue-row').first()).toHaveAttribute('data-queue', lastName);
  await page.reload();
  await expect(page.getByTestId('queue-row').first()).toHaveAttribute('data-queue', lastName);
  await expect(page.getByTestId('queue-row').first().getByTestId('queue-pin')).toHaveAttribute('aria-pressed', 'true');
});

test('processes that disappear are flagged', async ({ page }) => {
  await openSignedIn(page, s);
  await expect(page.getByTestId('process-row')).toHaveCount((await compound(s)).processes.length);
  expect((await load({ processes: 2 })).status).toBe(200);
  await expect(page.getByTestId('process-gone')).toHaveCount(2);
  await expect(page.getByTestId('process-gone').first()).toContainText('gone');
  expect((await load({ processes: 4 })).status).toBe(200);
});

test('theme, glossary, live/pause, ranges and CSV export', async ({ page }, testInfo) => {
  await openSignedIn(page, s);
  await page.getByTestId('theme-picker').selectOption('dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(15, 18, 22)');
  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark'); // kept
  await expect.poll(() => curves(page, 'chart-backlog').count()).toBeGreaterThanOrEqual(1);
  await screenshot(page, testInfo, 'dashboard-dark');
  await page.getByTestId('theme-picker').selectOption('light');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');

  const term = page.getByTestId('glossary-latency').first();
  await term.hover();
  await expect(term.getByRole('tooltip')).toBeVisible();
  await expect(term.getByRole('tooltip')).toContainText('oldest waiting job');

  await page.getByTestId('live-toggle').click();
  await expect(page.getByTestId('connection-health')).toContainText('Paused');
  await expect(page.getByTestId('live-toggle')).toHaveAttribute('aria-pressed', 'true');
  await page.getByTestId('live-toggle').click();
  await expect(page.getByTestId('connection-health')).toContainText('Live');

  // The first chart history asked for another span than the 15 m shown so far: a refresh of the
  // 15 m range may be on its way as the button is clicked, and is not the one this is about.
  const span = (url: string) => Number(new URL(url).searchParams.get('to')) - Number(new URL(url).searchParams.get('from'));
  const req = page.waitForRequest((r) => r.url().includes('/history?') && r.url().includes('points=600') && span(r.url()) !== 15 * 60_000);
  await page.getByTestId('range-6h').click();
  const q = new URL((await req).url()).searchParams;
  expect(Number(q.get('to')) - Number(q.get('from'))).toBe(6 * 3600_000);

  // The CSV is one row per bucket of the range shown. At 6 h a bucket is 36 s, so a server younger
  // than that exports a single row whatever it sampled (seen once, in a fast run); at 15 m a bucket
  // is 1.5 s and every 2 s sample is a row of its own.
  await page.getByTestId('range-15m').click();
  await expect(page.getByTestId('range-15m')).toHaveAttribute('aria-pressed', 'true');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
  const csv = await (await download.createReadStream()).toArray();
  const lines = Buffer.concat(csv).toString('utf8').trim().split('\n');
  expect(lines.length).toBeGreaterThan(2);
  expect(lines[0]).toMatch(/processed/);
});

test('without the sign-in link the UI asks for the token and says where to find it', async ({ page }) => {
  await page.goto(s.url + '/');
  await expect(page.getByTestId('signin')).toBeVisible();
  await expect(page.getByTestId('signin')).toContainText('Admin token (PRIVATE-TOKEN)');
  await page.getByTestId('signin-token').fill('not-the-token');
  await page.getByTestId('signin-submit').click();
  await expect(page.getByTestId('signin')).toContainText('was not accepted');
  await page.getByTestId('signin-token').fill(s.adminToken);
  await page.getByTestId('signin-submit').click();
  await expect(page.getByTestId('view-dashboard')).toBeVisible();
  // The link form removes the token from the address bar at once.
  await page.goto(`${s.url}/#token=${s.adminToken}`);
  await expect(page.getByTestId('view-dashboard')).toBeVisible();
  expect(page.url()).not.toContain(s.adminToken);
});
