// Accessibility of every view: axe-core (serious and critical rules) on each entry of the views
// menu, in light and in dark, against a server with something to show (demo load, a running build
// with a trace long enough to scroll, a queue's page, a server log long enough to scroll, an alert). The views are read from the menu the page renders, so a view added to
// renderer/views/registry.ts is covered without touching this file.
import fs from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { patchTrace, runningBuild } from '../api/lib.ts';
import { expectAccessible, openSignedIn, screenshot, startUiServer, UI_QUIET_REFRESH_MS } from './support.ts';
import { VIEWS } from '../../renderer/views/registry.ts';

// axe walks the whole page: on a loaded machine one view takes tens of seconds. The tests share
// nothing but the server (each loads its view afresh), so they may spread over both workers, each
// with its own server from beforeAll: run one after the other they were the suite's longest file.
test.describe.configure({ timeout: 150_000, mode: 'parallel' });

let s: TestServer;
let buildId: number;
/** One page per worker for the view checks (openView): a fresh page per test cost a browser
 *  context and a renderer process each, 1.2 s to make and 0.6 s to close at load ~25, and a cold
 *  HTTP cache for the UI's scripts every time. Each check is still a fresh document. */
let viewPage: Page;
test.beforeAll(async ({ browser }) => {
  // Each view is checked as it first renders the server's data: a refresh while axe walks the page
  // re-renders it (the dashboard every second at the test pace) for axe to measure again.
  s = await startUiServer({ uiRefreshMs: UI_QUIET_REFRESH_MS });
  const load = await http(`${s.url}/api/v3/sim/load`, { method: 'PUT', json: { queues: 12, processes: 2, concurrency: 3, rate: 20, seed: 3 }, token: s.adminToken });
  expect(load.status).toBe(200);
  const { build } = await runningBuild(s, { name: 'rspec', commands: 'bundle exec rspec' }, 'webapp');
  buildId = build.id;
  // Long enough that the trace box scrolls: a region only a mouse could scroll is a serious finding.
  const specs = Array.from({ length: 120 }, (_, i) => `spec/models/model_${i}_spec.rb .....\n`).join('');
  const part = Buffer.from(`\u001b[32;1mRunning with gitlab-ci-multi-runner 1.11.5\u001b[0;m\n$ bundle exec rspec\n${specs}`);
  expect((await patchTrace(s, build.id, { token: build.token, range: `0-${part.length}`, body: part })).status).toBe(202);
  await writeLogLines(s, 80);
  viewPage = await browser.newPage();
  // The keys of renderer/api/session.ts and renderer/app/theme.ts, stored before the page's scripts
  // run on every load: the theme is the one the load's URL names (openView).
  await viewPage.addInitScript((token) => {
    sessionStorage.setItem('jobscope.token', token);
    const theme = new URLSearchParams(location.search).get('e2e-theme');
    if (theme) localStorage.setItem('jobscope.theme', theme);
  }, s.adminToken);
});
test.afterAll(async () => {
  await viewPage?.close();
  await s?.close();
});
// The page fixture's screenshot on failure, for the shared page.
test.afterEach(async ({}, testInfo) => {
  if (viewPage && testInfo.status !== testInfo.expectedStatus) await testInfo.attach('screenshot', { body: await viewPage.screenshot(), contentType: 'image/png' });
});

/** Appends lines in the server log's own format (pino's JSON) to the file the server names: the
 *  test server logs nothing (log level silent), and Settings' log is a scrolling box only with lines in it. */
async function writeLogLines(server: TestServer, count: number): Promise<void> {
  const logs = await http(`${server.url}/api/app/logs`, { token: server.adminToken });
  expect(logs.status).toBe(200);
  const file = (logs.body as { file: string }).file;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const now = Date.now();
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ level: 30, time: now - (count - i) * 1000, msg: `monitor sample ${i}`, queue: `queue-${i % 12}` }));
  fs.appendFileSync(file, lines.join('\n') + '\n');
}

/** The box scrolls: its content is taller than it is. */
async function expectScrolls(box: Locator): Promise<void> {
  expect(await box.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
}

/** The views the menu offers, as the page renders them: [id from the href, label]. */
export async function menuViews(page: Page): Promise<{ id: string; label: string }[]> {
  // The header may fold some links into its "More" menu: those are in the DOM too.
  const links = page.locator('header [data-testid^="nav-"][href^="#/"]');
  await expect(links.first()).toBeAttached();
  return links.evaluateAll((as) => as.map((a) => ({ id: a.getAttribute('href')!.slice(2), label: a.textContent!.trim() })));
}

/** Opens a view's route in a theme with one page load, a new document: the token (where the sign-in
 *  link leaves it, sessionStorage) and the theme are stored before the page's scripts run, so the
 *  view is the first and only one rendered. Signing in through the link first rendered the dashboard
 *  (charts, samples) and then reloaded: two loads per check, and the dashboard's rendering was CPU
 *  axe waited behind. The query differs for each view and theme: a URL that differed from the
 *  last one only in its hash would change the route in the same document instead of loading one. */
async function openView(page: Page, id: string, theme: 'light' | 'dark'): Promise<void> {
  await page.goto(`${s.url}/?e2e-theme=${theme}&e2e-view=${encodeURIComponent(id)}#/${id}`);
  await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
  await expect(page.locator('main .view').first()).toBeVisible();
  await expect(page.locator('main')).not.toContainText('Loading…');
}

// The registry's entries: one test per view and theme, so a new view gets its own tests. The menu
// entries, and the routable ones kept out of it (tabs of another view, dev hooks) too; the first
// test checks that the page's menu offers exactly the registry's menu entries.
const MENU = VIEWS.filter((v) => !v.hidden);

test('the page menu offers every view of the registry', async ({ page }) => {
  await openSignedIn(page, s);
  expect((await menuViews(page)).map((v) => v.id)).toEqual(MENU.map((v) => v.id));
});

for (const theme of ['light', 'dark'] as const) {
  for (const v of VIEWS) {
    test(`${v.label} has no serious or critical axe violation (${theme})`, async ({}, testInfo) => {
      await openView(viewPage, v.id, theme);
      await expectAccessible(viewPage, `${v.label} (${theme})`);
      // The README's gallery of every view in both themes (`npm run screenshots`); not the dev hook.
      if (v.id !== 'bench') await screenshot(viewPage, testInfo, `view-${v.id}-${theme}`);
    });
  }
  test(`a build's page has no serious or critical axe violation (${theme})`, async () => {
    await openView(viewPage, `builds/${buildId}`, theme);
    await expect(viewPage.getByTestId('trace')).toContainText('model_119_spec');
    await expectScrolls(viewPage.getByTestId('trace'));
    await expectAccessible(viewPage, `a build's page (${theme})`);
  });
  test(`a queue's page has no serious or critical axe violation (${theme})`, async () => {
    const cur = await http<{ queues: Record<string, unknown> }>(`${s.url}/api/app/connections/embedded/current`, { token: s.adminToken });
    const queue = Object.keys(cur.body.queues ?? {})[0];
    expect(queue, 'the demo load has queues').toBeTruthy();
    await openView(viewPage, `queues/${encodeURIComponent(queue!)}`, theme);
    await expect(viewPage.getByTestId('queue-latency')).toBeVisible();
    await expectAccessible(viewPage, `a queue's page (${theme})`);
  });
  test(`Settings with its log lines has no serious or critical axe violation (${theme})`, async () => {
    await openView(viewPage, 'settings', theme);
    await expect(viewPage.getByTestId('log-row')).toHaveCount(80);
    await expectScrolls(viewPage.locator('[data-testid="log-viewer"] .log-table'));
    await expectAccessible(viewPage, `Settings with log lines (${theme})`);
  });
}

test('the sign-in form has no serious or critical axe violation', async ({ page }) => {
  await page.goto(s.url + '/');
  await expect(page.getByTestId('signin')).toBeVisible();
  await expectAccessible(page, 'sign-in');
});
