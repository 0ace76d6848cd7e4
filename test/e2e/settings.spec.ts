// The Settings view against a real server hosted the way `serve` and Electron host it (ServerHost,
// so "Reset data" can restart it in place): a saved setting shows "applies at next start" and
// lands in settings.json, a bad value shows the flag's own message, the theme switches, the demo
// load starts and stops live, the log viewer shows the server's log, and reset empties the builds.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import { ServerHost } from '../../hosts/server-host.ts';
import { resolveConfig } from '../../server/config.ts';
import { tempDir, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import { freePort } from '../helpers/redis.ts';
import { openSignedIn, requireBuiltUi, screenshot, UI_DIR } from './support.ts';

let host: ServerHost;
let s: TestServer;

test.beforeAll(async () => {
  requireBuiltUi();
  const dataDir = tempDir();
  const config = resolveConfig({ dataDir, port: 0, logLevel: 'info', mode: 'test', uiDir: UI_DIR }, {});
  host = new ServerHost(config);
  const url = await host.start();
  const store = host.server.ctx.store;
  s = {
    server: host.server, url, adminToken: store.adminToken, registrationToken: store.registrationToken, dataDir, config,
    close: async () => {
      await host.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
});
test.afterAll(async () => {
  await s?.close();
});

const row = (page: Page, name: string) => page.locator(`[data-testid="setting-row"][data-setting="${name}"]`);

test('settings: save for the next start, bad values refused, theme, demo load live, server log', async ({ page }, testInfo) => {
  await openSignedIn(page, s, '/settings');
  await expect(page.getByTestId('view-settings')).toBeVisible();
  await expect(page.getByTestId('data-dir')).toHaveText(s.dataDir);

  const artifacts = row(page, 'max-artifact-mb');
  await expect(artifacts.getByTestId('setting-effective')).toHaveText('100');
  await expect(artifacts.getByTestId('restart-marker')).toHaveCount(0);
  await artifacts.getByTestId('setting-input').fill('5');
  await page.getByTestId('settings-save').click();
  await expect(page.getByTestId('settings-saved')).toContainText('max-artifact-mb');
  await expect(artifacts.getByTestId('restart-marker')).toHaveText('applies at next start');
  await expect(artifacts.getByTestId('setting-effective')).toHaveText('100'); // in force until the restart
  const saved = JSON.parse(fs.readFileSync(path.join(s.dataDir, 'settings.json'), 'utf8')) as Record<string, unknown>;
  expect(saved['max-artifact-mb']).toBe(5);

  // A value the flag would refuse: the server's message, naming the flag; nothing saved.
  await row(page, 'port').getByTestId('setting-input').fill('eighty');
  await page.getByTestId('settings-save').click();
  await expect(page.getByTestId('settings-error')).toContainText('--port');
  expect(JSON.parse(fs.readFileSync(path.join(s.dataDir, 'settings.json'), 'utf8')).port).toBeUndefined();
  await row(page, 'port').getByTestId('setting-input').fill('');
  await expect(row(page, 'sim-journal-entries').getByTestId('setting-allowed')).toHaveText('Allowed: 1 – 100,000');

  // A host other machines could reach is saved only with the box ticked that says so.
  await row(page, 'host').getByTestId('setting-input').fill('0.0.0.0');
  await expect(page.getByTestId('settings-expose')).toContainText('other machines');
  await page.getByTestId('settings-save').click();
  await expect(page.getByTestId('settings-error')).toContainText('confirm_expose');
  expect(JSON.parse(fs.readFileSync(path.join(s.dataDir, 'settings.json'), 'utf8')).host).toBeUndefined();
  await page.getByTestId('settings-expose-confirm').check();
  await page.getByTestId('settings-save').click();
  await expect(page.getByTestId('settings-saved')).toContainText('host');
  expect(JSON.parse(fs.readFileSync(path.join(s.dataDir, 'settings.json'), 'utf8')).host).toBe('0.0.0.0');
  await row(page, 'host').getByTestId('setting-input').fill('');
  await expect(page.getByTestId('settings-expose')).toHaveCount(0);
  await page.getByTestId('settings-save').click();
  await expect(page.getByTestId('settings-saved')).toContainText('host');

  // Theme, through D's theme module: one attribute on <html>.
  await page.getByTestId('theme-dark').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  // One theme store for the page: the header's picker follows the choice made here.
  await expect(page.getByTestId('theme-picker')).toHaveValue('dark');
  await page.getByTestId('theme-light').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await page.getByTestId('theme-system').click(); // Playwright's page prefers light
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  expect(await page.evaluate(() => localStorage.getItem('jobscope.theme'))).toBe('system');

  // Demo mode: live, and saved for the next start.
  await expect(page.getByTestId('demo-state')).toHaveText('stopped');
  await page.getByTestId('demo-start').click();
  await expect(page.getByTestId('demo-state')).toHaveText('running');
  expect(((await http(`${s.url}/api/v3/sim/load`, { token: s.adminToken })).body as { running: boolean }).running).toBe(true);
  await page.getByTestId('demo-at-start').check();
  await expect(row(page, 'demo').getByTestId('restart-marker')).toBeVisible();
  await page.getByTestId('demo-stop').click();
  await expect(page.getByTestId('demo-state')).toHaveText('stopped');
  expect(((await http(`${s.url}/api/v3/sim/load`, { token: s.adminToken })).body as { running: boolean }).running).toBe(false);

  // The server log: the start is there at info; the warn filter leaves only warnings and worse.
  await page.getByTestId('log-refresh').click();
  await expect(page.locator('[data-testid="log-row"]', { hasText: /listening/i }).first()).toBeVisible();
  await page.getByTestId('log-level').selectOption('warn');
  await expect(page.locator('[data-testid="log-row"][data-level="info"]')).toHaveCount(0);
  await page.getByTestId('log-level').selectOption('info');
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, testInfo, 'settings');
});

test('reset data asks for "reset", then the builds list is empty', async ({ page }) => {
  const project = await createProject(s, 'doomed');
  await createBuild(s, project.id, { name: 'one' });
  await createBuild(s, project.id, { name: 'two' });

  await openSignedIn(page, s, '/builds');
  await expect(page.getByTestId('build-row')).toHaveCount(2);

  // At 1400 px Settings may sit in the header's More menu (the header folds what does not fit).
  if (!(await page.getByTestId('nav-settings').isVisible())) await page.getByTestId('nav-more').click();
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('reset-open').click();
  const dialog = page.getByTestId('reset-dialog');
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('reset-confirm')).toBeDisabled();
  await page.getByTestId('reset-word').fill('Reset');
  await expect(page.getByTestId('reset-confirm')).toBeDisabled();
  await page.getByTestId('reset-cancel').click();
  await expect(dialog).toHaveCount(0);
  expect((await http(`${s.url}/api/v3/sim/builds`, { token: s.adminToken })).body).toHaveLength(2);

  await page.getByTestId('reset-open').click();
  await page.getByTestId('reset-word').fill('reset');
  await page.getByTestId('reset-confirm').click();
  await expect(page.getByTestId('reset-status')).toContainText('Data reset', { timeout: 30_000 });

  await page.getByTestId('nav-builds').click();
  await expect(page.getByTestId('builds-table')).toContainText('No builds match');
  await expect(page.getByTestId('build-row')).toHaveCount(0);
  expect((await http(`${s.url}/api/v3/sim/builds`, { token: s.adminToken })).body).toEqual([]);
});

test('settings: a Redis URL nothing answers is refused with the reason; the box saves it anyway', async ({ page }) => {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}/0`;
  await openSignedIn(page, s, '/settings');
  await row(page, 'redis').getByTestId('setting-input').fill(url);
  await expect(page.getByTestId('settings-unreachable')).toHaveCount(0);
  await page.getByTestId('settings-save').click();
  await expect(page.getByTestId('settings-error')).toContainText(`connection refused by 127.0.0.1:${port}`);
  // Nothing saved: settings.json is absent (this test alone) or has no redis.
  expect(fs.existsSync(path.join(s.dataDir, 'settings.json')) && JSON.parse(fs.readFileSync(path.join(s.dataDir, 'settings.json'), 'utf8')).redis).toBeFalsy();
  await page.getByTestId('settings-unreachable-confirm').check();
  await page.getByTestId('settings-save').click();
  await expect(page.getByTestId('settings-saved')).toContainText('redis');
  await expect(page.getByTestId('settings-saved-warnings')).toContainText('saved anyway');
  expect(JSON.parse(fs.readFileSync(path.join(s.dataDir, 'settings.json'), 'utf8')).redis).toBe(url);
  await expect(page.getByTestId('settings-unreachable')).toHaveCount(0);
});
