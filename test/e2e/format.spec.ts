// Reading and reaching: one date and time format with its zone named, and a Settings choice of UTC
// (browser in Kolkata, UTC+5:30, so local and UTC differ by a half hour as well as hours); the
// header's select labels at 1400 px; the tour's last step on the Sidekiq connection; the CSV
// download named after the connection. One server for the file.
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { runningBuild } from '../api/lib.ts';
import { openSignedIn, startUiServer } from './support.ts';

test.describe.configure({ mode: 'serial' });
test.use({ timezoneId: 'Asia/Kolkata', viewport: { width: 1400, height: 900 } });

let s: TestServer;
let created: string;
test.beforeAll(async () => {
  s = await startUiServer();
  const { build } = await runningBuild(s, { name: 'rspec' }, 'webapp');
  created = (await http<{ created_at: string }>(`${s.url}/api/v3/sim/builds/${build.id}`, { token: s.adminToken })).body.created_at;
});
test.afterAll(async () => {
  await s?.close();
});

/** Opens a view in the same document (some menu links fold into "More" at 1400 px). */
const go = (page: Page, view: string) => page.evaluate((v) => (location.hash = `#/${v}`), view);

/** hh:mm:ss of an ISO time, in UTC or shifted by minutes. */
const hms = (iso: string, shiftMin = 0) => new Date(Date.parse(iso) + shiftMin * 60_000).toISOString().slice(11, 19);

test('times: one format naming its zone, local by default, UTC when Settings says so', async ({ page }) => {
  expect(created).toBeTruthy();
  await openSignedIn(page, s, '/builds');
  const createdCell = page.getByTestId('build-row').first().locator('td').nth(6);
  await expect(createdCell).toHaveText(new RegExp(`^\\d\\d \\w{3}, ${hms(created, 330)} UTC\\+5:30$`));
  await go(page, 'dashboard');
  await expect(page.getByTestId('last-sample')).toHaveText(/^\d\d:\d\d:\d\d UTC\+5:30 \(/);

  await go(page, 'settings');
  await expect(page.getByTestId('times-zone')).toContainText('UTC+5:30');
  await page.getByTestId('times-utc').check();
  await expect(page.getByTestId('times-zone')).not.toContainText('UTC+5:30');
  // Kept with the remembered view state on the server.
  await expect.poll(async () => (await http(`${s.url}/api/app/ui-state`, { token: s.adminToken })).body.values['times.utc']).toBe(true);

  await go(page, 'builds');
  await expect(createdCell).toHaveText(new RegExp(`^\\d\\d \\w{3}, ${hms(created)} UTC$`));
  await go(page, 'dashboard');
  await expect(page.getByTestId('last-sample')).toHaveText(/^\d\d:\d\d:\d\d UTC \(/);
  // The time axis follows: the hover readout over a chart names UTC too.
  const chart = page.getByTestId('chart-workers').locator('.chart-hover');
  await expect(page.getByTestId('chart-workers')).not.toHaveAttribute('data-points', '0');
  const box = (await chart.boundingBox())!;
  await page.mouse.move(box.x + box.width - 3, box.y + box.height / 2);
  await expect(page.getByTestId('chart-tooltip').first().locator('.muted').first()).toHaveText(/^\d\d \w{3}, \d\d:\d\d:\d\d UTC$/);

  await go(page, 'settings');
  await page.getByTestId('times-utc').uncheck();
  await expect(page.getByTestId('times-zone')).toContainText('UTC+5:30');
});

test('the header selects keep their visible labels at 1400 px', async ({ page }) => {
  await openSignedIn(page, s);
  for (const [label, select] of [['Connection', 'connection-picker'], ['Theme', 'theme-picker']] as const) {
    const text = page.locator('header.topbar label.inline', { has: page.getByTestId(select) }).locator('> .muted');
    await expect(text).toBeVisible();
    await expect(text).toHaveText(label);
  }
});

test("the tour's last step: the Sidekiq connection through its Redis, the controls it names outlined, its button opens the form", async ({ page }) => {
  await openSignedIn(page, s);
  await page.keyboard.press('?');
  await page.getByRole('button', { name: 'Take the tour again' }).click();
  await page.keyboard.press('Enter');
  await page.keyboard.press('Enter');
  const last = page.getByRole('dialog', { name: 'Connect a GitLab or a Sidekiq' });
  await expect(last.getByTestId('tour-step')).toHaveText('Step 3 of 3');
  await expect(last).toContainText('Sidekiq through its Redis');
  await expect(last).toContainText('Connection menu');
  await expect(page.getByTestId('connection-picker')).toHaveAttribute('data-tour-point', '');
  await expect(page.locator('.topbar [data-tour-point]')).toHaveCount(2);
  await last.getByRole('button', { name: 'Add a Sidekiq connection' }).click();
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await expect(page.getByTestId('add-kind-sidekiq')).toBeChecked();
  await expect(page.getByTestId('sk-name')).toBeFocused();
  await expect(page.locator('[data-tour-point]')).toHaveCount(0);
});

test('a CSV download is named after the connection, made safe for a file name', async ({ page }) => {
  const named = await http(`${s.url}/api/app/connections/embedded`, { method: 'PATCH', json: { name: 'Shop / EU "main"' }, token: s.adminToken });
  expect(named.status).toBe(200);
  await openSignedIn(page, s);
  await expect(page.locator('.dashboard h2')).toHaveText('Shop / EU "main"');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
  expect(download.suggestedFilename()).toMatch(/^jobscope-Shop-EU-main-\d{8}-\d{4}Z\.csv$/);
  const csv = Buffer.concat(await (await download.createReadStream()).toArray()).toString('utf8');
  expect(csv.split('\r\n')[0]).toMatch(/^time_utc,processed,/);
});
