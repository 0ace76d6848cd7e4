// Time on the dashboard's charts: the x axis is the whole selected range (now − range … now)
// however little history there is, a series with a single sample is a dot, the hover readout
// reads the samples under the cursor (and says when there are none), the refresh slider sets how
// often the dashboard asks for data, and a pause is marked on the charts while it lasts and after.
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { canvasHasColor, curves, expectAccessible, openSignedIn, requireBuiltUi, startUiServer, UI_DIR } from './support.ts';

const MIN = 60_000;

/** Seconds since midnight of an en-GB HH:MM:SS axis label. */
function secondsOf(label: string): number {
  const m = /^(\d\d):(\d\d):(\d\d)$/.exec(label.trim());
  if (!m) throw new Error(`not an HH:MM:SS tick: ${label}`);
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]);
}

async function chartWindow(page: Page, chart: string) {
  const c = page.getByTestId(chart);
  return { from: Number(await c.getAttribute('data-from')), to: Number(await c.getAttribute('data-to')) };
}

test.describe('a fresh server with one sample so far', () => {
  let s: TestServer;
  // The first sample is taken at start, the next only in 10 minutes: every series has one sample.
  // (Not startUiServer: changing the connection's interval takes a sample at once.)
  test.beforeAll(async () => {
    requireBuiltUi();
    s = await startServer({ uiDir: UI_DIR, monitorIntervalMs: 10 * MIN });
  });
  test.afterAll(async () => {
    await s?.close();
  });

  test('the 15 m range spans 15 minutes, a lone sample is a dot, the readout reads it', async ({ page }) => {
    await openSignedIn(page, s);
    await expect(page.getByTestId('last-sample')).not.toHaveText('none yet');
    const concurrency = curves(page, 'chart-workers').and(page.locator('[data-series="concurrency"]'));
    await expect(concurrency).toHaveAttribute('data-points', '1');

    // The window is the whole range, ending now.
    const w = await chartWindow(page, 'chart-workers');
    expect(w.to - w.from).toBe(15 * MIN);
    expect(Math.abs(w.to - Date.now())).toBeLessThan(2 * MIN);
    // And so are the axis labels: round times across the 15 minutes, not across the few seconds sampled.
    const ticks = page.locator('[data-testid="chart-workers"] .chart-x-ticks .chart-tick');
    await expect.poll(() => ticks.count()).toBeGreaterThanOrEqual(3);
    const labels = await ticks.allTextContents();
    const spanS = (secondsOf(labels.at(-1)!) - secondsOf(labels[0]!) + 86400) % 86400;
    expect(spanS).toBeGreaterThanOrEqual(10 * 60);
    expect(spanS).toBeLessThanOrEqual(15 * 60);

    // The single sample: a dot, at the right end of the plot, painted in the series' colour.
    await expect(concurrency).toHaveAttribute('data-dots', '1');
    const width = Number(await page.locator('[data-testid="chart-workers"] canvas.series-canvas').getAttribute('data-plot-width'));
    const x0 = Number(await concurrency.getAttribute('data-x0'));
    expect(width).toBeGreaterThan(100);
    expect(x0).toBeGreaterThan(0.9 * width);
    expect(x0).toBeLessThanOrEqual(width);
    const color = (await concurrency.getAttribute('data-color'))!;
    await expect.poll(() => canvasHasColor(page, 'chart-workers', color)).toBe(true);
    const busy = curves(page, 'chart-workers', 'area');
    await expect(busy).toHaveAttribute('data-dots', '1');

    // Hover: over the empty start of the range there is no sample to read; over the dot, both series.
    const canvas = await page.locator('[data-testid="chart-workers"] canvas.series-canvas').boundingBox();
    const midY = canvas!.y + canvas!.height / 2;
    await page.mouse.move(canvas!.x + width * 0.2, midY);
    const tip = page.getByTestId('chart-workers').getByTestId('chart-tooltip');
    await expect(tip).toContainText('no sample here');
    await page.mouse.move(canvas!.x + x0 - 1, midY);
    await expect(tip).not.toContainText('no sample here');
    await expect(tip.locator('.tt-name')).toHaveText(['concurrency', 'busy']);
    const conc = (await (await fetch(`${s.url}/api/v4/sidekiq/compound_metrics`, { headers: { 'PRIVATE-TOKEN': s.adminToken } })).json()) as { processes: { concurrency: number }[] };
    const total = conc.processes.reduce((a, p) => a + p.concurrency, 0);
    await expect(tip.locator('.tt-row').filter({ hasText: 'concurrency' }).locator('.tt-val')).toHaveText(String(total));
  });
});

test.describe('a live server sampling every 500 ms', () => {
  let s: TestServer;
  test.beforeAll(async () => {
    // The person's paces (no --ui-refresh-ms): the slider starts at the connection's 2 s. The page's
    // clock runs these tests' waits, so the real pace costs nothing.
    s = await startUiServer({ monitorIntervalMs: 500, uiRefreshMs: 0 });
  });
  test.afterAll(async () => {
    await s?.close();
  });

  test('the refresh slider sets how often the dashboard asks for history', async ({ page }) => {
    // The page's clock is Playwright's: it runs freely while the page loads, then is paused and
    // moved by hand, so the two paces are watched over 40 s of the page's time in a few seconds.
    // The requests are the page's real ones to the server, timed by the page's clock (the
    // instrumented fetch below, which axios calls), and each step waits for the answers, so a
    // refresh the interval asks for is never merged into one still running.
    await page.clock.install();
    await page.addInitScript(() => {
      const w = window as unknown as { __history: { asked: number[]; pending: number } };
      const h = (w.__history = { asked: [] as number[], pending: 0 });
      const realFetch = window.fetch.bind(window);
      window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
        const url = input instanceof Request ? input.url : String(input);
        if (!url.includes('/history?') || !url.includes('points=600')) return realFetch(input, init);
        h.asked.push(Date.now());
        h.pending++;
        return realFetch(input, init).finally(() => h.pending--);
      };
    });
    const asked = () => page.evaluate(() => (window as unknown as { __history: { asked: number[] } }).__history.asked);
    const pending = () => page.evaluate(() => (window as unknown as { __history: { pending: number } }).__history.pending);
    /** Moves the page's time on in half-second steps, each step's requests answered before the
     *  next, until `more` requests have been made since `n` or `maxMs` have passed. */
    const runUntil = async (n: number, more: number, maxMs: number) => {
      for (let t = 0; t < maxMs && (await asked()).length - n < more; t += 500) {
        await page.clock.runFor(500);
        await expect.poll(pending).toBe(0);
      }
      return (await asked()).slice(n);
    };
    await openSignedIn(page, s);
    const slider = page.getByTestId('poll-interval');
    // It starts at the connection's sampling interval (2 s here), the pace the dashboard kept before.
    await expect(slider).toHaveValue('2');
    await expect(page.getByTestId('live-state')).toHaveText('Live, every 2 s');

    await slider.fill('10');
    await expect(page.getByTestId('poll-interval-value')).toHaveText('10 s');
    await expect(page.getByTestId('live-state')).toHaveText('Live, every 10 s');
    // A moment ahead of the page's time as read; on a loaded machine more than that may pass before
    // pauseAt arrives ("Cannot fast-forward to the past", seen at load ~26), so it reads again.
    await expect(async () => page.clock.pauseAt((await page.evaluate(() => Date.now())) + 100)).toPass();
    await expect.poll(pending).toBe(0);
    const slow = await runUntil((await asked()).length, 2, 40_000);
    expect(slow.length).toBeGreaterThanOrEqual(2);
    // Never sooner than 10 s apart.
    expect(slow[1]! - slow[0]!).toBeGreaterThanOrEqual(9_500);

    await slider.fill('2');
    await expect(page.getByTestId('live-state')).toHaveText('Live, every 2 s');
    const fast = await runUntil((await asked()).length, 4, 30_000);
    expect(fast.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < fast.length; i++) expect(fast[i]! - fast[i - 1]!).toBeGreaterThanOrEqual(1_500);

    // Keyboard: the slider is an ordinary range input.
    await slider.press('End');
    await expect(page.getByTestId('poll-interval-value')).toHaveText('60 s');
  });

  test('a pause is marked on the charts: "paused since" while it lasts, the stretch after', async ({ page }) => {
    // Playwright's clock runs the page's time as real time does, except that the pause below is
    // moved on by hand instead of waited for.
    await page.clock.install();
    await openSignedIn(page, s);
    await expect(curves(page, 'chart-workers')).toHaveCount(1);
    const span = page.getByTestId('chart-workers').getByTestId('chart-span');
    await expect(span).toHaveCount(0);

    await page.getByTestId('live-toggle').click();
    await expect(page.getByTestId('live-state')).toContainText('Paused since');
    await expect(page.getByTestId('poll-interval')).toBeDisabled();
    // While paused the window ends where the pause began, and a line there says since when.
    await expect(span).toHaveCount(1);
    await expect(span).toHaveAttribute('data-to', '');
    const began = Number(await span.getAttribute('data-from'));
    await expect.poll(async () => (await chartWindow(page, 'chart-workers')).to).toBe(began);
    await expect(span).toContainText(/^paused since \d\d:\d\d:\d\d$/);
    const canvas = (await page.locator('[data-testid="chart-workers"] canvas.series-canvas').boundingBox())!;
    const line = (await span.boundingBox())!;
    expect(Math.abs(line.x - (canvas.x + canvas.width))).toBeLessThanOrEqual(2);
    // Every chart marks it.
    for (const chart of ['chart-backlog', 'chart-latency', 'chart-rates']) await expect(page.getByTestId(chart).getByTestId('chart-span')).toHaveCount(1);

    // A pause of a few seconds, then live again: the stretch is shaded where it was on the axis.
    await page.clock.fastForward(4_500);
    await expect.poll(() => page.evaluate(() => Date.now()).then((now) => now - began)).toBeGreaterThan(4_000);
    await page.getByTestId('live-toggle').click();
    await expect(page.getByTestId('live-state')).toContainText('Live');
    await expect(span).not.toHaveAttribute('data-to', '');
    const ended = Number(await span.getAttribute('data-to'));
    expect(ended - began).toBeGreaterThan(4_000);
    await expect(span).toContainText(/^paused \d\d:\d\d:\d\d–\d\d:\d\d:\d\d$/);
    await expect.poll(async () => (await chartWindow(page, 'chart-workers')).to).toBeGreaterThan(ended);
    const w = await chartWindow(page, 'chart-workers');
    const band = (await span.boundingBox())!;
    const px = (t: number) => canvas.x + ((t - w.from) / (w.to - w.from)) * canvas.width;
    expect(Math.abs(band.x - px(began))).toBeLessThanOrEqual(2);
    expect(Math.abs(band.x + band.width - px(ended))).toBeLessThanOrEqual(2);
    expect(band.width).toBeGreaterThan(1);
    await expectAccessible(page, 'the dashboard with a pause marked and the refresh slider');
  });
});
