// Alerts in Chromium against a real embedded server: the banner names the connection, a firing is
// notified once through the browser's Notification API (permission granted through Playwright, the
// real constructor wrapped to count), an acknowledgement hides it across a reload, and after the
// queue is deleted the alert resolves and the Alerts view shows it resolved.
import { test, expect } from './fixtures.ts';
import type { BrowserContext, Page } from '@playwright/test';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { enqueue, openSignedIn, screenshot, startUiServer } from './support.ts';

test.describe.configure({ mode: 'serial' });

let s: TestServer;
test.beforeAll(async () => {
  s = await startUiServer();
});
test.afterAll(async () => {
  await s?.close();
});

const QUEUE = 'e2e_alarm';
type Notes = { __notes: string[][] };
const notes = (page: Page) => page.evaluate(() => (window as unknown as Notes).__notes.map((n) => n.join(': ')));
const board = async () => (await http(`${s.url}/api/app/alerts/board`, { token: s.adminToken })).body as { firing: { id: number }[]; resolved: { id: number }[] };
/** Resolves after the page has read the alerts `n` more times. */
const boardReads = (page: Page, n: number) =>
  Promise.all(Array.from({ length: n }, () => page.waitForResponse((r) => r.url().includes('/api/app/alerts/board') && r.ok(), { timeout: 30_000 })));

/** Grants notifications to the page and counts each one shown, through the real constructor. */
async function countNotifications(page: Page, context: BrowserContext): Promise<void> {
  await context.grantPermissions(['notifications'], { origin: s.url });
  await page.addInitScript(() => {
    const w = window as unknown as Notes & { Notification: typeof Notification };
    const Real = w.Notification;
    w.__notes = [];
    const Counted = function (title: string, opts?: NotificationOptions) {
      w.__notes.push([title, opts?.body ?? '']);
      return new Real(title, opts);
    } as unknown as typeof Notification;
    Object.defineProperty(Counted, 'permission', { get: () => Real.permission });
    Object.defineProperty(Counted, 'requestPermission', { value: Real.requestPermission.bind(Real) });
    w.Notification = Counted;
  });
}

test('the banner names the connection, a firing is notified once, and an acknowledgement survives a reload', async ({ page, context }) => {
  await countNotifications(page, context);
  await openSignedIn(page, s);
  const r = await http(`${s.url}/api/app/connections/embedded/thresholds`, { method: 'PUT', json: { queues: { [QUEUE]: { backlog: 3 } } }, token: s.adminToken });
  expect(r.status).toBe(200);
  await enqueue(s, QUEUE, 40, 120_000); // more than the 10 workers: a backlog that stays
  const banner = page.getByTestId('alert-banner');
  await expect(banner).toContainText(`This Jobscope: Backlog of queue ${QUEUE}`);
  await expect(banner).not.toContainText('embedded');
  await expect.poll(() => notes(page)).toEqual([expect.stringMatching(new RegExp(`^Jobscope alert: Backlog of queue ${QUEUE} is \\d+, above the threshold 3 on This Jobscope$`))]);
  // Still firing a few reads later (and after a reload): no second notification.
  await boardReads(page, 3);
  expect(await notes(page)).toHaveLength(1);
  await page.reload();
  await expect(banner).toBeVisible();
  await boardReads(page, 2);
  expect(await notes(page)).toEqual([]);

  await banner.getByRole('button', { name: `Acknowledge: Backlog of queue ${QUEUE}`, exact: false }).click();
  await expect(banner).toHaveCount(0);
  await page.reload();
  await boardReads(page, 2);
  await expect(banner).toHaveCount(0);
  expect((await board()).firing).toHaveLength(1); // acknowledged, still firing
});

test('after its queue is deleted the alert resolves, and the Alerts view shows it resolved', async ({ page, context }, testInfo) => {
  await countNotifications(page, context);
  await openSignedIn(page, s, '/alerts');
  const firing = page.getByTestId('alerts-firing');
  await expect(firing.getByTestId('alert-firing-row')).toContainText([`Backlog of queue ${QUEUE}`]);
  await expect(firing).toContainText('yes,'); // acknowledged in the test before
  const del = await http(`${s.url}/api/v3/sim/jobs/queues/${QUEUE}`, { method: 'DELETE', token: s.adminToken });
  expect(del.status).toBe(200);
  const resolved = page.getByTestId('alerts-resolved').getByTestId('alert-resolved-row').first();
  await expect(resolved).toContainText(`This Jobscope`);
  await expect(resolved).toContainText(`Backlog of queue ${QUEUE}`);
  await expect(resolved.locator('.badge')).toHaveText('resolved');
  await expect(page.getByText('Nothing is firing.')).toBeVisible();
  await expect(page.getByTestId('alert-banner')).toHaveCount(0);
  await screenshot(page, testInfo, 'alert-resolved');

  // Notifications turned off (kept with the view state): a new firing shows in the banner only.
  await page.getByRole('checkbox', { name: /Notify me of each new alert/ }).uncheck();
  await expect.poll(async () => (await http(`${s.url}/api/app/ui-state`, { token: s.adminToken })).body.values['alerts.notify']).toBe(false);
  const r = await http(`${s.url}/api/app/connections/embedded/thresholds`, { method: 'PUT', json: { queues: { e2e_quiet_alarm: { backlog: 3 } } }, token: s.adminToken });
  expect(r.status).toBe(200);
  await enqueue(s, 'e2e_quiet_alarm', 8, 120_000); // the workers are still busy with the deleted queue's jobs
  await expect(page.getByTestId('alert-banner')).toContainText('Backlog of queue e2e_quiet_alarm');
  await boardReads(page, 2);
  expect(await notes(page)).toEqual([]);
});
