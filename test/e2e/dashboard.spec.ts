// The dashboard against a real embedded server: it loads, its numbers are the API's numbers, its
// charts draw the sampled series, jobs enqueued through the control API appear, a threshold fires.
import { test, expect } from './fixtures.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { canvasHasColor, compound, curves, enqueue, legendItem, openSignedIn, screenshot, startUiServer } from './support.ts';

let s: TestServer;
test.beforeAll(async () => {
  s = await startUiServer();
});
test.afterAll(async () => {
  await s?.close();
});

const kpi = (page: import('@playwright/test').Page, name: string) => page.getByTestId(`kpi-${name}-value`);
const int = (text: string) => Number(text.replace(/[^0-9]/g, ''));

test('loads, and the KPI cards show what compound_metrics answers', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) errors.push(m.text());
  });
  await openSignedIn(page, s);
  await expect(page.getByTestId('view-dashboard')).toBeVisible();
  await expect(page.getByTestId('last-sample')).not.toHaveText('none yet');

  // The system is idle here, so the sampled numbers settle on the API's.
  await expect
    .poll(async () => {
      const api = await compound(s);
      const busy = api.processes.reduce((a, p) => a + p.busy, 0);
      const conc = api.processes.reduce((a, p) => a + p.concurrency, 0);
      const ui = {
        processed: int(await kpi(page, 'processed').innerText()),
        failed: int(await kpi(page, 'failed').innerText()),
        enqueued: int(await kpi(page, 'enqueued').innerText()),
        busy: await kpi(page, 'busy').innerText(),
        processes: int(await kpi(page, 'processes').innerText()),
      };
      return JSON.stringify(ui) === JSON.stringify({ ...api.jobs, busy: `${busy} / ${conc}`, processes: api.processes.length });
    })
    .toBe(true);
  expect(errors).toEqual([]);
});

test('enqueued jobs show up in the charts and both tables', async ({ page }, testInfo) => {
  await openSignedIn(page, s);
  await expect(page.getByTestId('last-sample')).not.toHaveText('none yet');
  // 30 jobs of 4 s against the server's 10 workers: a backlog that drains over ~12 s, workers busy.
  await enqueue(s, 'e2e_reports', 30, 4000);
  const api = await compound(s);
  expect(api.queues.e2e_reports!.backlog).toBeGreaterThan(0);

  await expect(legendItem(page, 'chart-backlog', 'e2e_reports')).toBeVisible();
  await expect(legendItem(page, 'chart-latency', 'e2e_reports')).toBeVisible();
  // One drawn curve per queue series that has data; e2e_reports is among them.
  const drawn = Number(await page.getByTestId('chart-backlog').getAttribute('data-series-drawn'));
  expect(drawn).toBeGreaterThanOrEqual(1);
  await expect(curves(page, 'chart-backlog')).toHaveCount(drawn);
  // Drawn for real: the canvas reports e2e_reports with its samples, and its colour is painted.
  const reports = curves(page, 'chart-backlog').and(page.locator('[data-series="e2e_reports"]'));
  await expect(reports).toHaveAttribute('data-points', /^[1-9]\d*$/);
  const color = (await reports.getAttribute('data-color'))!;
  expect(color).toMatch(/^#[0-9a-f]{6}$/i);
  await expect.poll(() => canvasHasColor(page, 'chart-backlog', color)).toBe(true);
  await expect(page.locator('[data-testid="chart-backlog"] canvas.series-canvas')).toHaveAttribute('aria-label', /series: .*e2e_reports/);
  // Busy workers vs concurrency: two series, both drawn (busy is an area, concurrency a line).
  await expect(curves(page, 'chart-workers', 'area')).toHaveCount(1);
  await expect(curves(page, 'chart-workers')).toHaveCount(1);
  await expect.poll(async () => int((await kpi(page, 'busy').innerText()).split('/')[0]!)).toBeGreaterThan(0);

  const row = page.locator('[data-testid="queue-row"][data-queue="e2e_reports"]');
  await expect(row).toBeVisible();
  expect(int(await row.getByTestId('queue-backlog').innerText())).toBeGreaterThan(0);
  await expect(page.getByTestId('process-row').first()).toBeVisible();
  expect(await page.getByTestId('process-row').count()).toBe((await compound(s)).processes.length);

  // Filtering and pinning the queues table.
  await page.getByTestId('queues-filter').fill('e2e_rep');
  await expect(page.getByTestId('queue-row')).toHaveCount(1);
  await page.getByTestId('queues-filter').fill('');
  // Hovering the plot shows the tooltip with each series' value at that time (the latest here).
  const canvas = page.locator('[data-testid="chart-backlog"] canvas.series-canvas');
  await canvas.scrollIntoViewIfNeeded();
  const plot = (await canvas.boundingBox())!;
  await page.mouse.move(plot.x + plot.width - 2, plot.y + plot.height / 2);
  const tip = page.locator('[data-testid="chart-backlog"] [data-testid="chart-tooltip"]');
  await expect(tip).toBeVisible();
  await expect(tip.locator('.tt-row', { hasText: 'e2e_reports' }).locator('.tt-val')).toHaveText(/^[\d,]+$/);
  await page.mouse.move(0, 0);

  // Legend toggle hides a series and shows it again.
  const before = await curves(page, 'chart-backlog').count();
  await legendItem(page, 'chart-backlog', 'e2e_reports').click();
  await expect(curves(page, 'chart-backlog')).toHaveCount(before - 1);
  await expect(reports).toHaveCount(0);
  // Its colour leaves the canvas too, where no other drawn series shares it.
  const others = await curves(page, 'chart-backlog').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.color));
  if (!others.includes(color)) await expect.poll(() => canvasHasColor(page, 'chart-backlog', color)).toBe(false);
  await legendItem(page, 'chart-backlog', 'e2e_reports').click();
  await expect(curves(page, 'chart-backlog')).toHaveCount(before);
  await expect.poll(() => canvasHasColor(page, 'chart-backlog', color)).toBe(true);

  await screenshot(page, testInfo, 'dashboard-jobs');
});

test('a backlog threshold set in the editor fires: banner and a line on the chart', async ({ page }) => {
  await openSignedIn(page, s);
  const editor = page.getByTestId('thresholds-editor');
  await editor.getByTestId('thr-add').click();
  await editor.getByTestId('thr-queue').last().fill('e2e_alerting');
  await editor.getByTestId('thr-backlog').last().fill('5');
  await editor.getByTestId('thr-save').click();
  await expect(editor.getByTestId('thr-message')).toContainText('Saved');

  // Jobs long enough that 10 workers leave a backlog of 30 for a while.
  await enqueue(s, 'e2e_alerting', 40, 20_000);
  const banner = page.getByTestId('alert-banner');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText('Backlog of queue e2e_alerting');
  await expect(page.locator('[data-testid="chart-backlog"] .threshold-line')).toHaveCount(1);
  // The crossing itself is marked on the chart at the alert's time.
  await expect(page.locator('[data-testid="chart-backlog"] .alert-marker').first()).toBeAttached();
});

test('with the Electron preload bridge: signed in from the bridge, alerts become native notifications', async ({ page }) => {
  // Electron cannot run here; the page gets the bridge's shape (electron/bridge-types.ts) instead.
  await page.addInitScript(
    ([url, token]) => {
      const w = window as unknown as { jobscope: unknown; __notes: string[][] };
      w.__notes = [];
      w.jobscope = {
        getBackend: async () => ({ url, token }),
        notify: async (title: string, body: string) => void w.__notes.push([title, body]),
      };
    },
    [s.url, s.adminToken],
  );
  await page.goto(`${s.url}/`);
  await expect(page.getByTestId('view-dashboard')).toBeVisible();
  await expect(page.getByTestId('signin')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Sign out' })).toHaveCount(0); // the desktop app owns the token

  const r = await http(`${s.url}/api/app/connections/embedded/thresholds`, { method: 'PUT', json: { queues: { e2e_native: { backlog: 3 } } }, token: s.adminToken });
  expect(r.status).toBe(200);
  await enqueue(s, 'e2e_native', 30, 20_000);
  await expect
    .poll(() => page.evaluate(() => (window as unknown as { __notes: string[][] }).__notes.map((n) => n.join(': ')).join('\n')))
    .toContain('Jobscope alert: Backlog of queue e2e_native');
});

/** What a series canvas shows: its pixels, bitmap and CSS size, where it sits, its drawn list. */
type CanvasLook = { png: string; width: number; height: number; box: { x: number; y: number; w: number; h: number }; drawn: string; items: string[]; theme: string };
type Looks = { early?: CanvasLook; react?: CanvasLook };

test('the first chart is drawn before the main script has run, and React takes it over unchanged, in both themes', async ({ page }) => {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme }); // the theme is "system" unless chosen
    // From a blank page: a load from the app's own page took the main script from memory, past the route.
    await page.goto('about:blank');
    // The main script (React, the shell, the dashboard's own chart) is held until the early chart is
    // checked, and so are the style sheets asked for by request: the frame's styles are in the page.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    for (const asset of ['**/assets/index-*.js', '**/assets/*.css']) {
      await page.route(asset, async (route) => {
        await held;
        await route.continue();
      });
    }
    try {
      const historyAnswer = page.waitForResponse((r) => r.url().includes('/api/app/connections/embedded/history?'));
      await page.goto(`${s.url}/#token=${s.adminToken}`, { waitUntil: 'commit' });
      await expect(page.locator('[data-testid="chart-workers"] canvas.series-canvas li')).toHaveCount(2);
      await expect(page.getByTestId('view-dashboard')).toHaveCount(0); // React has not rendered
      // The early chart as it is, and React's first commit of the chart as that left it (a refetch
      // a second later redraws it), recorded by an observer before the main script may run.
      await page.evaluate(() => {
        const looks: Looks = ((window as unknown as { __looks: Looks }).__looks = {});
        const look = (c: HTMLCanvasElement): CanvasLook => {
          const r = c.getBoundingClientRect();
          return { png: c.toDataURL(), width: c.width, height: c.height, box: { x: r.x, y: r.y, w: r.width, h: r.height }, drawn: c.dataset.drawn ?? '', items: [...c.querySelectorAll('li')].map((li) => li.textContent ?? ''), theme: document.documentElement.dataset.theme ?? '' };
        };
        looks.early = look(document.querySelector('[data-testid="chart-workers"] canvas.series-canvas')!);
        const o = new MutationObserver(() => {
          const c = document.querySelector<HTMLCanvasElement>('[data-testid="view-dashboard"] [data-testid="chart-workers"] canvas.series-canvas');
          if (!c) return;
          looks.react = look(c);
          o.disconnect();
        });
        o.observe(document.body, { subtree: true, childList: true });
      });
      // The series the API answered, each point of it drawn, and painted.
      const h = (await (await historyAnswer).json()) as { totals: Record<string, (number | null)[]> };
      for (const [name, kind] of [['busy', 'area'], ['concurrency', 'line']] as const) {
        await expect(curves(page, 'chart-workers', kind).and(page.locator(`[data-series="${name}"]`))).toHaveAttribute('data-points', String(h.totals[name]!.filter((v) => v !== null).length));
      }
      expect(await canvasHasColor(page, 'chart-workers', (await curves(page, 'chart-workers', 'area').getAttribute('data-color'))!)).toBe(true);
      await expect(page.getByTestId('view-dashboard')).toHaveCount(0);
      release();

      await expect(page.getByTestId('view-dashboard')).toBeVisible();
      const looks = (await (await page.waitForFunction(() => (window as unknown as { __looks: Looks }).__looks.react && (window as unknown as { __looks: Looks }).__looks)).jsonValue()) as Required<Looks>;
      // One chart, React's, where the early one was, with its size, pixels and fallback list, in the theme.
      await expect(page.locator('[data-testid="chart-workers"]')).toHaveCount(1);
      await expect(page.locator('[data-testid="chart-workers"] canvas.series-canvas')).toHaveCount(1);
      await expect(page.locator('[data-early-dashboard]')).toHaveCount(0);
      expect(looks.early.theme).toBe(colorScheme);
      expect(looks.react).toEqual(looks.early);
      await expect(curves(page, 'chart-workers', 'area')).toHaveAttribute('data-series', 'busy');
      await expect(curves(page, 'chart-workers')).toHaveAttribute('data-series', 'concurrency');
    } finally {
      release();
      await page.unrouteAll({ behavior: 'ignoreErrors' });
    }
  }
});

test('no early chart when the early history fails: the page waits for React, which draws the one chart', async ({ page }) => {
  // A remembered connection that no longer exists: the early history answers 404.
  await page.addInitScript(() => localStorage.setItem('jobscope.connection', 'gone'));
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/assets/index-*.js', async (route) => {
    await held;
    await route.continue();
  });
  try {
    const historyAnswer = page.waitForResponse((r) => r.url().includes('/api/app/connections/gone/history?'));
    await page.goto(`${s.url}/#token=${s.adminToken}`, { waitUntil: 'commit' });
    expect((await historyAnswer).status()).toBe(404);
    await expect(page.locator('[data-early-dashboard]')).toBeHidden();
    await expect(page.locator('canvas.series-canvas')).toHaveCount(0);
    await expect(page.getByText('Starting…')).toBeVisible();
    release();
    await expect(curves(page, 'chart-workers', 'area')).toHaveCount(1);
    await expect(page.locator('[data-testid="chart-workers"] canvas.series-canvas')).toHaveCount(1);
  } finally {
    release();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
  }
});

test('the early chart is drawn once the page is parsed, without waiting for the main script', async ({ page }) => {
  // The history answers before parsing has ended: a parser-blocking script at the end of the body
  // (added to the served page) arrives only after that answer. The main script is held throughout:
  // DOMContentLoaded, which waits for it, never comes while the early chart must be drawn.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const historyAnswer = page.waitForResponse((r) => r.url().includes('/api/app/connections/embedded/history?'));
  await page.route('**/assets/index-*.js', async (route) => {
    await held;
    await route.continue();
  });
  await page.route(`${s.url}/`, async (route) => {
    const res = await route.fetch();
    await route.fulfill({ response: res, body: (await res.text()).replace('</body>', '<script src="./hold-parsing.js"></script></body>') });
  });
  await page.route('**/hold-parsing.js', async (route) => {
    // The early entry has the answer (the draw's wait on it has ended too: the same microtasks).
    await page.waitForFunction(() => (window as unknown as { __jobscopeEarlyHistory?: { value?: unknown } }).__jobscopeEarlyHistory?.value !== undefined);
    expect(await page.evaluate(() => document.readyState)).toBe('loading');
    await route.fulfill({ contentType: 'text/javascript', body: '' });
  });
  try {
    await page.goto(`${s.url}/#token=${s.adminToken}`, { waitUntil: 'commit' });
    expect((await historyAnswer).status()).toBe(200);
    await expect(page.locator('[data-testid="chart-workers"] canvas.series-canvas li')).toHaveCount(2);
    expect(await page.evaluate(() => document.readyState)).toBe('interactive');
    await expect(page.getByTestId('view-dashboard')).toHaveCount(0);
  } finally {
    release();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
  }
});
