// Desktop niceties in Chromium against real servers: the skip link, keyboard shortcuts (g + letter, "/", "?"),
// the help dialog (focus trapped and restored, Esc), view state remembered across a restart on
// another port with the same data dir (range, filters, connection, theme), and the first-run tour
// (shown once, skippable, reachable again from the help dialog).
import fs from 'node:fs';
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { openSignedIn, runAxe, startUiServer, UI_QUIET_REFRESH_MS } from './support.ts';
import { VIEWS } from '../../renderer/views/registry.ts';
import { viewShortcuts } from '../../renderer/app/shortcuts.ts';

// Each test walks a whole feature (many views, two servers): more than the default minute on a busy machine.
test.describe.configure({ timeout: 180_000 });

const servers: TestServer[] = [];
test.afterEach(async () => {
  for (const s of servers.splice(0).reverse()) await s.close();
});

// The features here are the page's own (shortcuts, dialogs, remembered state): no test waits for
// the server to change anything, so the views need not ask for new data every second.
async function uiServer(overrides: Record<string, unknown> = {}) {
  const s = await startUiServer({ uiRefreshMs: UI_QUIET_REFRESH_MS, ...overrides });
  servers.push(s);
  return s;
}

const hash = (page: Page) => page.evaluate(() => location.hash);
/** "g" then `key`; pressed again if the page was too busy to take the pair (2 shared cores). */
async function go(page: Page, key: string, view: string) {
  await expect(async () => {
    await page.keyboard.press('g');
    await page.keyboard.press(key);
    await expect.poll(() => hash(page), { timeout: 2000 }).toBe(`#/${view}`);
  }, `g ${key}`).toPass({ timeout: 15_000 });
}
/** Serious or critical axe findings inside the open dialog. */
async function dialogProblems(page: Page, testId: string): Promise<string[]> {
  // axe.run in the page, every rule (no tag filter), selectors for violations only: as in
  // support.ts's accessibilityProblems, without a second page to finish the run in.
  const r = await runAxe(page, { resultTypes: ['violations'] }, { include: [`[data-testid="${testId}"]`], exclude: [] });
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** The dialog has no serious or critical axe finding in the light theme nor in the dark one. */
async function expectDialogAccessible(page: Page, testId: string) {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme }); // the theme is "system" unless chosen
    await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
    expect(await dialogProblems(page, testId), `${testId} (${scheme})`).toEqual([]);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

const focusedTestId = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName ?? null);

test('keyboard shortcuts: g + letter opens views, / focuses the filter, ? opens the help', async ({ page }) => {
  const s = await uiServer();
  await openSignedIn(page, s);
  await expect(page.getByTestId('queues-filter')).toBeVisible();

  const shortcuts = viewShortcuts(VIEWS);
  expect(shortcuts).toEqual(expect.arrayContaining([{ key: 'd', view: 'dashboard', label: 'Dashboard' }, { key: 'b', view: 'builds', label: 'Builds' }]));
  await go(page, 'b', 'builds');
  await expect(page.getByTestId('view-builds')).toBeVisible();
  for (const sc of shortcuts) await go(page, sc.key, sc.view);
  await go(page, 'd', 'dashboard');

  // "/" focuses the view's filter; shortcuts typed there are text, not commands.
  await expect(page.getByTestId('queues-filter')).toBeVisible();
  await page.keyboard.press('/');
  await expect(page.getByTestId('queues-filter')).toBeFocused();
  await page.keyboard.type('gb?');
  await expect(page.getByTestId('queues-filter')).toHaveValue('gb?');
  expect(await hash(page)).toBe('#/dashboard');
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await page.getByTestId('queues-filter').fill('');
  await page.getByTestId('nav-builds').click();
  await expect(page.getByTestId('filter-status')).toBeVisible();
  await page.getByTestId('nav-builds').focus();
  await page.keyboard.press('/');
  await expect(page.getByTestId('filter-status')).toBeFocused();

  // "?" opens the help: a labelled dialog listing the shortcuts, focus inside and trapped there.
  await page.getByTestId('nav-builds').focus();
  await page.keyboard.press('?');
  const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await expect(help).toBeVisible();
  await expect(help.getByRole('button', { name: 'Close' })).toBeFocused();
  await expect(help.getByTestId('shortcut-row')).toHaveCount(shortcuts.length + 3);
  await expectDialogAccessible(page, 'help-dialog');
  await expect(help).toContainText('Open Dashboard');
  await expect(help).toContainText('Open Builds');
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press('Tab');
    expect(await help.evaluate((d) => d.contains(document.activeElement)), `Tab ${i + 1}`).toBe(true);
  }
  for (let i = 0; i < 3; i++) {
    await page.keyboard.press('Shift+Tab');
    expect(await help.evaluate((d) => d.contains(document.activeElement)), `Shift+Tab ${i + 1}`).toBe(true);
  }
  // Shortcuts are off while it is open.
  await page.keyboard.press('g');
  await page.keyboard.press('d');
  expect(await hash(page)).toBe('#/builds');
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog')).toHaveCount(0);
  expect(await focusedTestId(page)).toBe('nav-builds');
  // The header's button opens it too.
  await page.getByTestId('help-button').click();
  await expect(help).toBeVisible();
  await help.getByRole('button', { name: 'Close' }).click();
  await expect(help).toHaveCount(0);
  await expect(page.getByTestId('help-button')).toBeFocused();
});

test('the skip link is the first Tab stop, seen when focused, and leads into the view; Runners, Runner console, Simulator and Settings have shortcuts', async ({ page }) => {
  const s = await uiServer();
  await openSignedIn(page, s);
  await expect(page.getByTestId('queues-filter')).toBeVisible();

  // Hidden until focused, then on screen; Enter leaves the route as it was and the focus in <main>.
  const skip = page.getByRole('link', { name: 'Skip to content' });
  const route = await hash(page);
  expect((await skip.boundingBox())!.y).toBeLessThan(0);
  await page.keyboard.press('Tab');
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await page.keyboard.press('Enter');
  expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('MAIN');
  expect(await hash(page)).toBe(route);
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.querySelector('main')!.contains(document.activeElement) && document.activeElement !== document.querySelector('main'))).toBe(true);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());

  const added = [['r', 'runners', 'Runners'], ['o', 'runner-console', 'Runner console'], ['i', 'simulator', 'Simulator'], ['s', 'settings', 'Settings']] as const;
  for (const [key, view] of added) await go(page, key, view);
  await page.keyboard.press('?');
  const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  for (const [key, , label] of added) await expect(help.getByTestId('shortcut-row').filter({ hasText: `Open ${label}` })).toHaveText(`g then ${key}Open ${label}`);
});

test('range, filters, connection and theme come back after a restart on another port (same data dir)', async ({ page }) => {
  const dataDir = tempDir('jobscope-e2e-ui-state-');
  const other = await startServer(); // a second instance to watch: it outlives the restart
  servers.push(other);
  let s = await uiServer({ dataDir });
  const conn = await http(`${s.url}/api/app/connections`, { json: { name: 'Other Jobscope', base_url: other.url, private_token: other.adminToken }, token: s.adminToken });
  expect(conn.status).toBe(201);
  const connId = (conn.body as { id: string }).id;
  const project = await http(`${s.url}/api/v3/sim/projects`, { json: { name: 'webapp' }, token: s.adminToken });
  expect(project.status).toBe(201);
  const projectId = String((project.body as { id: number }).id);

  await openSignedIn(page, s);
  await page.getByTestId('range-6h').click();
  await page.getByTestId('queues-filter').fill('mail');
  await page.getByTestId('theme-picker').selectOption('dark');
  await page.getByTestId('connection-picker').selectOption(connId);
  await page.getByTestId('nav-builds').click();
  await page.getByTestId('filter-status').selectOption('failed');
  await page.getByTestId('filter-project').selectOption(projectId);
  // Saved on the backend (the page sends changes a moment after the last one).
  await expect
    .poll(async () => (await http(`${s.url}/api/app/ui-state`, { token: s.adminToken })).body.values)
    .toMatchObject({ 'dashboard.range': '6h', 'dashboard.queues-filter': 'mail', theme: 'dark', connection: connId, 'builds.status': 'failed', 'builds.project': projectId });

  const oldUrl = s.url;
  await s.close({ keepData: true });
  servers.splice(servers.indexOf(s), 1);
  s = await uiServer({ dataDir });
  expect(s.url).not.toBe(oldUrl); // another port: another origin, whose localStorage is empty
  await openSignedIn(page, s);
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(page.getByTestId('connection-picker')).toHaveValue(connId);
  await expect(page.getByTestId('range-6h')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('queues-filter')).toHaveValue('mail');
  await page.getByTestId('nav-builds').click();
  await expect(page.getByTestId('filter-status')).toHaveValue('failed');
  await expect(page.getByTestId('filter-project')).toHaveValue(projectId);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a change made before the backend\'s copy arrives joins the remembered values, erasing none', async ({ page }) => {
  // A new profile (or browser mode on another port) has an empty localStorage: a theme chosen
  // before the backend answers is all this page holds. CI saw it replace the whole remembered
  // state once, tour_seen included, and the tour covered the next view after a reload.
  const s = await uiServer();
  const put = await http(`${s.url}/api/app/ui-state`, { method: 'PUT', json: { values: { tour_seen: true, 'dashboard.range': '6h' } }, token: s.adminToken });
  expect(put.status).toBe(200);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let asked = false;
  await page.route('**/api/app/ui-state', async (route) => {
    if (route.request().method() === 'GET' && !asked) {
      asked = true;
      await held; // the first read waits until the theme has changed
    }
    await route.continue();
  });
  await openSignedIn(page, s);
  await page.getByTestId('theme-picker').selectOption('dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  expect(asked).toBe(true);
  release();
  // The dashboard also remembers its series colours per connection (dashboard.colours.<id>): the
  // three values must all be kept, and nothing else but colours may be there.
  const remembered = async () => {
    const values = (await http(`${s.url}/api/app/ui-state`, { token: s.adminToken })).body.values as Record<string, unknown>;
    const rest = Object.keys(values).filter((k) => !k.startsWith('dashboard.colours.'));
    return Object.fromEntries(rest.map((k) => [k, values[k]]));
  };
  await expect.poll(remembered).toEqual({ tour_seen: true, 'dashboard.range': '6h', theme: 'dark' });
  await expect(page.getByTestId('range-6h')).toHaveAttribute('aria-pressed', 'true');
  await page.unroute('**/api/app/ui-state');
  await page.evaluate(() => localStorage.clear());
  await page.reload();
  await expect(page.getByTestId('range-6h')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(page.getByRole('dialog')).toHaveCount(0);
});

test('first-run tour: shown once, skippable, accessible, reachable again from the help dialog', async ({ page }) => {
  const s = await uiServer();
  // A first run: nothing remembered yet (startUiServer marks the tour seen for every other spec).
  expect((await http(`${s.url}/api/app/ui-state`, { method: 'PUT', json: { values: {} }, token: s.adminToken })).status).toBe(200);
  await openSignedIn(page, s, '/dashboard', { tour: true });
  const tour = page.getByRole('dialog', { name: 'Watch a job system' });
  await expect(tour).toBeVisible();
  await expect(tour.getByRole('button', { name: 'Next' })).toBeFocused();
  await expectDialogAccessible(page, 'tour');
  await page.keyboard.press('Enter');
  await expect(page.getByRole('dialog', { name: 'Simulate CI runners' })).toBeVisible();
  await page.keyboard.press('Enter');
  const connect = page.getByRole('dialog', { name: 'Connect a GitLab' });
  await expect(connect).toBeVisible();
  await expect(connect.getByTestId('tour-step')).toHaveText('Step 3 of 3');
  await connect.getByRole('button', { name: 'Back' }).click();
  await expect(page.getByRole('dialog', { name: 'Simulate CI runners' })).toBeVisible();
  await page.getByRole('button', { name: 'Skip the tour' }).click();
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await expect.poll(async () => (await http(`${s.url}/api/app/ui-state`, { token: s.adminToken })).body.values.tour_seen).toBe(true);

  // Shown once: a reload (and a new browser profile) opens no tour; "?" still works, so the app is up.
  await page.evaluate(() => localStorage.clear());
  const read = page.waitForResponse((r) => r.url().endsWith('/api/app/ui-state') && r.request().method() === 'GET');
  await page.reload();
  await read;
  await expect(page.getByTestId('queues-filter')).toBeVisible();
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible();
  await expect(page.getByRole('dialog')).toHaveCount(1);

  // Reachable again from the help; a step's button opens its view; Esc closes.
  await page.getByRole('button', { name: 'Take the tour again' }).click();
  await expect(tour).toBeVisible();
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Open the simulator' }).click();
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await expect.poll(() => hash(page)).toBe('#/simulator');
  await page.keyboard.press('?');
  await page.getByRole('button', { name: 'Take the tour again' }).click();
  await expect(tour).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog')).toHaveCount(0);
});
