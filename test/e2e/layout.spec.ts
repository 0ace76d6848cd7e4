// Narrow and wide windows, the desktop window's range: at 1024×700 the header stays one row (the
// views that do not fit fold into "More"), nothing scrolls sideways; at 2560×1440 the content
// uses the width (≥ 90% of the viewport, charts two abreast). Every view of the registry is
// visited at both ends; screenshots of the dashboard at both ends, light and dark.
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { openSignedIn, screenshot, startUiServer, UI_QUIET_REFRESH_MS } from './support.ts';
import { VIEWS } from '../../renderer/views/registry.ts';

test.describe.configure({ timeout: 150_000 });

let s: TestServer;
test.beforeAll(async () => {
  // Geometry and screenshots of each view as first rendered: a refresh on the way only re-renders
  // (the dashboard every second at the test pace) while the checks and the screenshots wait for CPU.
  s = await startUiServer({ uiRefreshMs: UI_QUIET_REFRESH_MS });
  const load = await http(`${s.url}/api/v3/sim/load`, { method: 'PUT', json: { queues: 40, processes: 3, concurrency: 4, rate: 30, seed: 5 }, token: s.adminToken });
  expect(load.status).toBe(200);
});
test.afterAll(async () => {
  await s?.close();
});

const NARROW = { width: 1024, height: 700 };
const WIDE = { width: 2560, height: 1440 };
const MENU = VIEWS.filter((v) => !v.hidden);

async function openView(page: Page, id: string): Promise<void> {
  await page.evaluate((r) => (location.hash = r), `/${id}`);
  await expect(page.locator('main .view').first()).toBeVisible();
  await expect(page.locator('main')).not.toContainText('Loading…');
}

/** The header's geometry: its height, the tallest control's, and whether every visible control
 *  shares one row (each one's vertical span overlaps every other's). */
function headerRow(page: Page) {
  return page.locator('header.topbar').evaluate((h) => {
    const kids = [...h.children].map((c) => c.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
    const style = getComputedStyle(h);
    const chrome = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom) + parseFloat(style.borderTopWidth) + parseFloat(style.borderBottomWidth);
    const oneRow = kids.every((a) => kids.every((b) => a.top < b.bottom && b.top < a.bottom));
    return { height: h.getBoundingClientRect().height, tallest: Math.max(...kids.map((r) => r.height)), chrome, oneRow, right: Math.max(...kids.map((r) => r.right)), width: h.clientWidth };
  });
}

/** How far the page scrolls sideways (0 = no horizontal scrollbar). */
function sideways(page: Page) {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

test('at 1024×700 the header is one row on every view, some views fold into More, nothing scrolls sideways', async ({ page }) => {
  await page.setViewportSize(NARROW);
  await openSignedIn(page, s);
  for (const v of MENU) {
    await openView(page, v.id);
    const h = await headerRow(page);
    expect(h.oneRow, `header controls on one row on ${v.label}`).toBe(true);
    expect(h.height, `header height on ${v.label}`).toBeLessThanOrEqual(h.tallest + h.chrome + 1);
    expect(h.right, `header controls inside the window on ${v.label}`).toBeLessThanOrEqual(NARROW.width);
    expect(await sideways(page), `horizontal scroll on ${v.label}`).toBe(0);
  }
  // Every view is still one click away: in the row, or in More.
  await expect(page.getByTestId('nav-more')).toBeVisible();
  const inRow = await page.locator('header nav > a[data-testid^="nav-"]').count();
  expect(inRow).toBeGreaterThan(0);
  expect(inRow).toBeLessThan(MENU.length);
  const last = MENU[MENU.length - 1]!;
  await openView(page, MENU[0]!.id);
  await expect(page.getByTestId(`nav-${last.id}`)).toBeHidden();
  await page.getByTestId('nav-more').click();
  await expect(page.getByTestId('nav-more')).toHaveAttribute('aria-expanded', 'true');
  await page.getByTestId(`nav-${last.id}`).click();
  await expect(page.getByTestId(`nav-${last.id}`)).toBeHidden(); // the list closed on navigation
  expect(new URL(page.url()).hash).toBe(`#/${last.id}`);
  await expect(page.getByTestId('nav-more')).toHaveClass(/active/); // the current view is in More
});

test('at 2560×1440 the content fills the window: ≥ 90% wide on every view, charts two abreast', async ({ page }) => {
  await page.setViewportSize(WIDE);
  await openSignedIn(page, s);
  for (const v of MENU) {
    await openView(page, v.id);
    const h = await headerRow(page);
    expect(h.oneRow, `header controls on one row on ${v.label}`).toBe(true);
    const main = await page.locator('main').boundingBox();
    const view = await page.locator('main .view').first().boundingBox();
    expect(main!.width, `main width on ${v.label}`).toBeGreaterThanOrEqual(0.9 * WIDE.width);
    expect(view!.width, `view width on ${v.label}`).toBeGreaterThanOrEqual(0.9 * WIDE.width);
    expect(await sideways(page), `horizontal scroll on ${v.label}`).toBe(0);
  }
  // All views fit in the row: no More.
  await expect(page.getByTestId('nav-more')).toHaveCount(0);
  await openView(page, 'dashboard');
  const charts = page.locator('.view.dashboard .charts > .card');
  await expect(charts.first()).toBeVisible();
  const boxes = await charts.evaluateAll((cs) => cs.map((c) => c.getBoundingClientRect()).map((r) => ({ top: Math.round(r.top), width: r.width })));
  expect(boxes.length).toBeGreaterThanOrEqual(2);
  expect(boxes[0]!.top).toBe(boxes[1]!.top); // side by side
  expect(boxes[0]!.width).toBeGreaterThan(1100); // and each wider than the old 1500 px page allowed for two
});

for (const theme of ['light', 'dark'] as const) {
  for (const [name, size] of [['1024', NARROW], ['2560', WIDE]] as const) {
    test(`screenshot: the dashboard at ${size.width}×${size.height} (${theme})`, async ({ page }, testInfo) => {
      await page.setViewportSize(size);
      // The theme is in localStorage before the page's scripts run: one load in that theme, not a
      // load in the default one and a reload.
      await page.addInitScript((t) => localStorage.setItem('jobscope.theme', t), theme);
      await openSignedIn(page, s);
      await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
      await expect.poll(async () => Number(await page.getByTestId('chart-backlog').getAttribute('data-series-drawn'))).toBeGreaterThanOrEqual(1);
      expect((await headerRow(page)).oneRow).toBe(true);
      await screenshot(page, testInfo, `layout-${name}-${theme}`);
    });
  }
}
