// What every e2e spec needs: a real Jobscope server serving the built UI, signed-in pages, the
// control and runner APIs for arranging state, and screenshots kept both as test artifacts and in
// docs/screenshots/ (the README shows them).
import fs from 'node:fs';
import path from 'node:path';
import { expect, type Page, type TestInfo } from '@playwright/test';
import { createRequire } from 'node:module';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';

/** E2E_UI_DIR: a UI built elsewhere (`npx vite build --outDir <dir>`), so a spec can run while
 *  another build rewrites dist/renderer. */
export const UI_DIR = process.env.E2E_UI_DIR ?? 'dist/renderer';

export function requireBuiltUi(): void {
  if (!fs.existsSync(path.join(UI_DIR, 'index.html'))) throw new Error(`${UI_DIR}/index.html is missing: run \`npx vite build\` before the e2e tests`);
}

/** How often a UI test server's UI asks for new data (--ui-refresh-ms), in place of the person's
 *  paces (the dashboard at least every 2 s, alerts every 2-5 s, lists every 2-15 s), which a spec
 *  waited out for each change the server already had. Not faster: at 250 ms the dashboard's
 *  re-renders cost more CPU than the waits they saved (the suite at load ~20: 160 s user against
 *  124 s, and slower), and the lists and alerts gained little more. */
export const UI_TEST_REFRESH_MS = 1000;

/** The pace for a spec whose tests wait on nothing the server changes by itself: what they check is
 *  there when the view loads, or the page refetches it after the test's own action. Every view then
 *  asks once a minute instead of every second: a dashboard left at the test pace cost ~12 % of a core
 *  in Chromium while a test only waited or clicked (probe, 8 s idle: renderer 0.57, browser 0.17,
 *  GPU 0.09, network 0.10 core-s; at this pace ~0). Not for a spec that waits for a sample, a
 *  build's progress or an alert to show up. */
export const UI_QUIET_REFRESH_MS = 60_000;

/** A server with the UI, sampling every 500 ms, its UI refreshing every UI_TEST_REFRESH_MS; the
 *  embedded connection's own interval at its minimum, 2 s (what a server without the overrides keeps). */
export async function startUiServer(overrides: Record<string, unknown> = {}): Promise<TestServer> {
  requireBuiltUi();
  const s = await startServer({ uiDir: UI_DIR, monitorIntervalMs: 500, uiRefreshMs: UI_TEST_REFRESH_MS, ...overrides });
  const r = await http(`${s.url}/api/app/connections/embedded`, { method: 'PATCH', json: { interval_s: 2 }, token: s.adminToken });
  if (r.status !== 200) throw new Error(`PATCH embedded connection: ${r.status} ${JSON.stringify(r.body)}`);
  await markTourSeen(s); // also for specs that open the page without openSignedIn
  return s;
}

/** Opens the UI through the sign-in link, as a user following the server's printed link would.
 *  Another route rides in the same link (`#/runners&token=…`, which renderer/api/session.ts takes
 *  apart): the view is the first one rendered. Signing in on the dashboard and then changing the
 *  hash rendered the dashboard's charts and history first, CPU the test then waited behind. */
export async function openSignedIn(page: Page, s: TestServer, route = '/dashboard', opts: { tour?: boolean } = {}): Promise<void> {
  // The first-run tour is a modal dialog: every spec but the tour's own starts with it seen.
  if (!opts.tour) await markTourSeen(s);
  await page.goto(route === '/dashboard' ? `${s.url}/#token=${s.adminToken}` : `${s.url}/#${route}&token=${s.adminToken}`);
  await page.waitForFunction(() => !location.hash.includes('token='));
  expect(new URL(page.url()).hash || '#/dashboard').toBe(`#${route}`);
}

/** Marks the first-run tour seen in the server's remembered UI state, keeping the rest of it. */
export async function markTourSeen(s: TestServer): Promise<void> {
  const url = `${s.url}/api/app/ui-state`;
  const got = await http(url, { token: s.adminToken });
  if (got.status !== 200) throw new Error(`GET ui-state: ${got.status}`);
  if (got.body.values.tour_seen === true) return;
  const put = await http(url, { method: 'PUT', json: { values: { ...got.body.values, tour_seen: true } }, token: s.adminToken });
  if (put.status !== 200) throw new Error(`PUT ui-state: ${put.status} ${JSON.stringify(put.body)}`);
}

export async function enqueue(s: TestServer, queue: string, count: number, duration_ms = 0) {
  const r = await http(`${s.url}/api/v3/sim/jobs`, { json: { queue, count, duration_ms }, token: s.adminToken });
  if (r.status !== 202 && r.status !== 201) throw new Error(`enqueue: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export type Compound = {
  queues: Record<string, { backlog: number; latency: number }>;
  processes: { busy: number; concurrency: number }[];
  jobs: { processed: number; failed: number; enqueued: number };
};

export async function compound(s: TestServer): Promise<Compound> {
  const r = await http(`${s.url}/api/v4/sidekiq/compound_metrics`, { token: s.adminToken });
  if (r.status !== 200) throw new Error(`compound_metrics: ${r.status}`);
  return r.body as Compound;
}

/** `npm run screenshots` (UPDATE_SCREENSHOTS=1) refreshes the README's copies in docs/screenshots/;
 *  E2E_SCREENSHOTS=1 keeps them as test artifacts in test-results/. An ordinary run takes none: a
 *  full-page PNG of a view cost 0.1-1.9 s of the page's CPU (the dashboard the most), ~30 of them a
 *  run, for files nothing reads; a failing test still gets its own (playwright.config.ts). */
const SCREENSHOT_DIR = process.env.UPDATE_SCREENSHOTS === '1' ? 'docs/screenshots' : process.env.E2E_SCREENSHOTS === '1' ? 'test-results/screenshots' : undefined;

export async function screenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  if (!SCREENSHOT_DIR) return;
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  await testInfo.attach(name, { path: file, contentType: 'image/png' });
}

/** The series a chart drew on its canvas, one element each (li.series-line, areas li.series-area),
 *  written by the drawing loop itself with data-series, data-color, data-points, data-segments. */
export function curves(page: Page, chartTestId: string, kind: 'line' | 'area' = 'line') {
  return page.locator(`[data-testid="${chartTestId}"] canvas.series-canvas li.series-${kind}`);
}

/** Whether the chart's canvas has pixels of this colour (#rrggbb, as drawn by a line: within a
 *  small tolerance, mostly opaque: an antialiased edge keeps the colour with less alpha), i.e. the line is really painted, not just listed. */
export async function canvasHasColor(page: Page, chartTestId: string, color: string): Promise<boolean> {
  return page.locator(`[data-testid="${chartTestId}"] canvas.series-canvas`).evaluate((c: HTMLCanvasElement, hex: string) => {
    const want = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
    const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i + 3]! >= 160 && Math.abs(px[i]! - want[0]!) <= 8 && Math.abs(px[i + 1]! - want[1]!) <= 8 && Math.abs(px[i + 2]! - want[2]!) <= 8) return true;
    }
    return false;
  }, color);
}

/** The legend entry (a toggle button) of a series. */
export function legendItem(page: Page, chartTestId: string, name: string) {
  return page.locator(`[data-testid="${chartTestId}"] .legend-item[data-series="${name}"]`);
}

/** axe-core as @axe-core/playwright loads it (its own axe-core dependency, so the same version and
 *  rules), but the minified build: 0.65 MB of script instead of axe.js's 1.5 MB. */
const axeDir = path.dirname(createRequire(createRequire(import.meta.url).resolve('@axe-core/playwright')).resolve('axe-core/package.json'));
const AXE_VERSION = (JSON.parse(fs.readFileSync(path.join(axeDir, 'package.json'), 'utf8')) as { version: string }).version;
let axeScript: string | undefined;

type AxeResults = { passes: unknown[]; violations: { id: string; impact?: string | null; help: string; nodes: { target: string[]; failureSummary?: string }[] }[] };

/** axe.run() in the page, as AxeBuilder's legacy mode runs it (same context, options and
 *  configure call), with axe put into a document once. AxeBuilder evaluated the unminified source
 *  twice per analyze (once in analyze(), again in its per-frame inject): at load ~20 those two were
 *  80 s of the suite's 144 s in axe, the run itself 64 s. A page that is checked again (hash
 *  navigation, a theme switch) keeps its axe; a reload gets a fresh one. `context`: as AxeBuilder's
 *  include()/exclude() pass it; null is the whole document. */
export async function runAxe(page: Page, options: Record<string, unknown>, context: { include: string[]; exclude: string[] } | null = null): Promise<AxeResults> {
  const present = await page.evaluate((v) => (window as unknown as { axe?: { version?: string } }).axe?.version === v, AXE_VERSION);
  if (!present) {
    axeScript ??= `${fs.readFileSync(path.join(axeDir, 'axe.min.js'), 'utf8')}\n;axe.configure({ allowedOrigins: ['<same_origin>'], branding: { application: 'playwright' } });`;
    await page.evaluate(axeScript);
  }
  const r = await page.evaluate(
    ([opts, ctx]) =>
      (window as unknown as { axe: { run(c: unknown, o: unknown): Promise<AxeResults> } }).axe.run(ctx ?? document, opts).then(
        (results) => ({ error: null, results }),
        (e: Error) => ({ error: e.message, results: null }),
      ),
    [options, context] as const,
  );
  if (r.error !== null || !r.results) throw new Error(`axe.run: ${r.error}`);
  return r.results;
}

/** axe-core on the page as it is now (WCAG 2.x A and AA rules plus axe's best practices): each
 *  serious or critical violation as one line naming the rule, with the first elements it found. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  // Legacy mode (axe.run() in the page itself, as AxeBuilder.setLegacyMode() does): the default
  // (runPartial in each frame, then finishRun) opens a second, blank page, injects axe there too and
  // sends it the partial results: about a third of each check's time for nothing here, since the UI
  // has no frames; the rules and results are the same.
  // resultTypes: every rule still runs on every element, but only violations get a unique selector
  // and HTML snippet for each element they name; passes, incomplete and inapplicable keep one
  // element each. Those selectors were most of a check's time on the dashboard (~1,100 elements:
  // 10-12 s of page CPU per analyze at load ~17, 5-7 s without), and nothing here reads them.
  const result = await runAxe(page, {
    resultTypes: ['violations'],
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
  });
  // One line per check, so a run's log gives the figures (the moderate and minor ones are allowed).
  const count = (impact: string) => result.violations.filter((v) => v.impact === impact).length;
  const lesser = result.violations.filter((v) => v.impact !== 'serious' && v.impact !== 'critical').map((v) => v.id);
  console.log(`[axe] ${new URL(page.url()).hash || '/'}: ${result.passes.length} rules passed; violations critical ${count('critical')}, serious ${count('serious')}, moderate ${count('moderate')}, minor ${count('minor')}${lesser.length ? ` (${lesser.join(', ')})` : ''}`);
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.slice(0, 5).map((n) => `    ${n.target.join(' ')}: ${n.failureSummary?.split('\n').slice(1, 2).join('').trim() ?? ''}`).join('\n')}`);
}

/** Fails on any serious or critical axe violation. Call it from any spec once a view has rendered;
 *  a11y.spec.ts runs it on every view of the menu in both themes. */
export async function expectAccessible(page: Page, what = ''): Promise<void> {
  expect(await accessibilityProblems(page), `axe found serious or critical violations${what ? ` on ${what}` : ''}`).toEqual([]);
}
