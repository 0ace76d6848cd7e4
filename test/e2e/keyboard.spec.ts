// Keyboard use: Tab reaches every control of the header and of a view, each with a visible focus
// ring; the header's More list opens, is walked and closed from the keyboard. Live updates are
// announced politely, once per change of state (an alert, paused), never per sample; charts carry
// a table of their values for screen readers.
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { enqueue, openSignedIn, startUiServer } from './support.ts';

test.describe.configure({ timeout: 150_000 });

let s: TestServer;
test.beforeAll(async () => {
  s = await startUiServer();
});
test.afterAll(async () => {
  await s?.close();
});

/** Every control in the header and the view that is shown and enabled: what Tab must reach. */
function controls(page: Page) {
  return page.evaluate(() => {
    return [...document.querySelectorAll<HTMLElement>('a[href], button, input, select, textarea, summary, [tabindex]')]
      .filter((e) => e.closest('header, main') && e.checkVisibility() && !(e as HTMLButtonElement).disabled && e.tabIndex >= 0)
      .map((e) => e.dataset.testid ?? e.getAttribute('aria-label') ?? e.textContent!.trim().slice(0, 40));
  });
}

/** Presses Tab until focus leaves the page or comes back round; for each stop, its name and
 *  whether a focus ring shows (an outline or a box-shadow while :focus-visible). */
async function tabThrough(page: Page, max = 400) {
  await page.locator('body').focus();
  const stops: { name: string; ring: boolean; id: string }[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const stop = await page.evaluate(() => {
      const e = document.activeElement as HTMLElement | null;
      if (!e || e === document.body) return null;
      const cs = getComputedStyle(e);
      const ring = e.matches(':focus-visible') && ((cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2) || cs.boxShadow !== 'none');
      return { name: e.dataset.testid ?? e.getAttribute('aria-label') ?? e.textContent!.trim().slice(0, 40), ring, id: e.dataset.kbdStop ?? (e.dataset.kbdStop = String(Math.random())) };
    });
    if (!stop || stops.some((x) => x.id === stop.id)) break;
    stops.push(stop);
  }
  return stops;
}

test('Tab reaches every control of the header and the dashboard, each with a visible focus ring', async ({ page }) => {
  await openSignedIn(page, s);
  await expect(page.getByTestId('view-dashboard')).toBeVisible();
  await expect(page.getByTestId('queue-row').first()).toBeVisible();
  const want = await controls(page);
  expect(want).toEqual(expect.arrayContaining(['nav-dashboard', 'nav-builds', 'connection-picker', 'theme-picker', 'range-1h', 'export-csv', 'queues-filter']));
  const stops = await tabThrough(page);
  const names = stops.map((x) => x.name);
  for (const w of want) expect(names, `Tab reaches ${w}`).toContain(w);
  expect(stops.filter((x) => !x.ring).map((x) => x.name), 'stops without a visible focus ring').toEqual([]);

  // And Enter/Space work where focus lands: a range button, the live toggle.
  await page.getByTestId('range-1h').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('range-1h')).toHaveAttribute('aria-pressed', 'true');
  await page.getByTestId('live-toggle').focus();
  await page.keyboard.press('Space');
  await expect(page.getByTestId('live-toggle')).toHaveAttribute('aria-pressed', 'true');
  await page.keyboard.press('Space');
  await expect(page.getByTestId('live-toggle')).toHaveAttribute('aria-pressed', 'false');
});

test('at 1024 px the header\'s More list works from the keyboard: open, walk, choose, Escape', async ({ page }) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await openSignedIn(page, s);
  const more = page.getByTestId('nav-more');
  await expect(more).toBeVisible();
  await more.focus();
  await page.keyboard.press('Enter');
  await expect(more).toHaveAttribute('aria-expanded', 'true');
  const first = page.locator('.nav-more-list a').first();
  await page.keyboard.press('Tab');
  await expect(first).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(more).toHaveAttribute('aria-expanded', 'false');
  await expect(more).toBeFocused(); // focus goes back to the button
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  const href = await first.getAttribute('href');
  await page.keyboard.press('Enter');
  await expect.poll(() => new URL(page.url()).hash).toBe(href);
  await expect(more).toHaveAttribute('aria-expanded', 'false');
});

test('changes of state are announced politely, once each, never per sample', async ({ page }) => {
  await openSignedIn(page, s);
  const region = page.getByTestId('live-announcer');
  await expect(region).toHaveAttribute('aria-live', 'polite');
  await expect(region).toHaveAttribute('role', 'status');
  // Nothing else on the page is a live region that the samples rewrite.
  const chart = page.getByTestId('chart-backlog');
  await expect.poll(async () => Number(await chart.getAttribute('data-points'))).toBeGreaterThanOrEqual(2);
  const seq0 = Number(await region.getAttribute('data-seq'));
  const pts0 = Number(await chart.getAttribute('data-points'));
  await expect.poll(async () => Number(await chart.getAttribute('data-points')), { timeout: 30_000 }).toBeGreaterThanOrEqual(pts0 + 3);
  expect(Number(await region.getAttribute('data-seq')), 'announcements while samples arrived').toBe(seq0);
  const live = await page.evaluate(() =>
    [...document.querySelectorAll('[aria-live], [role=status], [role=alert], [role=log], [role=timer]')]
      .filter((e) => e.getAttribute('aria-live') !== 'off')
      .map((e) => (e as HTMLElement).dataset.testid ?? e.tagName),
  );
  expect(live).toEqual(['live-announcer']);

  // Pausing is announced.
  await page.getByTestId('live-toggle').click();
  await expect(region).toHaveText('Paused');
  await page.getByTestId('live-toggle').click();
  await expect(region).toContainText('Live');

  // An alert: said once, politely; the banner itself does not interrupt.
  const r = await http(`${s.url}/api/app/connections/embedded/thresholds`, { method: 'PUT', json: { queues: { e2e_announced: { backlog: 3 } } }, token: s.adminToken });
  expect(r.status).toBe(200);
  await enqueue(s, 'e2e_announced', 20, 20_000);
  await expect(page.getByTestId('alert-banner')).toContainText('Backlog of queue e2e_announced');
  await expect(region).toContainText('Alert: Backlog of queue e2e_announced');
  await expect(page.getByTestId('alert-banner')).not.toHaveAttribute('role', 'alert');
});

test('each chart has a table of its values for screen readers', async ({ page }) => {
  await enqueue(s, 'e2e_summary', 25, 60_000); // more than the workers: some wait
  await openSignedIn(page, s);
  const table = page.locator('[data-testid="chart-backlog"] table[data-testid="chart-summary"]');
  await expect(table).toBeAttached();
  await expect(table.locator('caption')).toContainText('Chart values from');
  await expect(table.locator('thead th')).toHaveText(['Series', 'Latest', 'Lowest', 'Highest']);
  const row = table.locator('tr[data-series="e2e_summary"]');
  await expect(row.locator('td').first()).not.toHaveText('no data');
  await expect.poll(async () => Number(await row.locator('td').nth(2).innerText())).toBeGreaterThanOrEqual(1);
  // Seen by screen readers only: the canvas's fallback content, which nothing lays out (no box)...
  expect(await table.evaluate((e) => e.parentElement?.tagName)).toBe('CANVAS');
  expect(await table.boundingBox()).toBeNull();
  // ...and which Chromium's own accessibility tree (what a screen reader reads) still holds, with
  // its cells, under the chart's figure (an image's children would be presentational).
  const cdp = await page.context().newCDPSession(page);
  type AXNode = { nodeId: string; ignored: boolean; role?: { value: string }; name?: { value: string }; childIds?: string[]; parentId?: string };
  const axTree = async () => {
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as { nodes: AXNode[] };
    const byId = new Map(nodes.map((n) => [n.nodeId, n]));
    const below = (n: AXNode): AXNode[] => (n.childIds ?? []).flatMap((id) => (byId.get(id) ? [byId.get(id)!, ...below(byId.get(id)!)] : []));
    return { nodes, byId, below };
  };
  const isChartTable = (n: AXNode) => !n.ignored && n.role?.value === 'table' && !!n.name?.value.startsWith('Chart values from');
  const { nodes, byId, below } = await axTree();
  const tables = nodes.filter(isChartTable);
  expect(tables.length).toBeGreaterThanOrEqual(1);
  for (const t of tables) expect(below(t).filter((n) => n.role?.value === 'cell').length).toBeGreaterThanOrEqual(3);
  const figureOf = (n: AXNode | undefined): AXNode | undefined => (!n ? undefined : !n.ignored && n.role?.value === 'figure' ? n : figureOf(n.parentId ? byId.get(n.parentId) : undefined));
  expect(figureOf(tables[0])?.name?.value).toMatch(/^Chart lines for \d+ series|^No data to draw/);

  // Under an open modal dialog, the page behind it is out of the tree, the tables included (Chromium
  // leaves a canvas's fallback content reachable under a modal: the chart hides it itself).
  const reachableTables = async () => {
    const tree = await axTree();
    return tree.below(tree.nodes.find((n) => n.role?.value === 'RootWebArea')!).filter(isChartTable).length;
  };
  expect(await reachableTables()).toBe(tables.length);
  await page.getByTestId('nav-builds').focus();
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible();
  await expect.poll(reachableTables).toBe(0);
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await expect.poll(reachableTables).toBe(tables.length);
});
