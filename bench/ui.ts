// Benchmark: the dashboard in Chromium (browser mode), two figures from one run.
//  1. Redraw cost with 50 series × 1,000 points (issue 4: under 16 ms a frame): the dashboard's chart
//     component on synthetic data (the #/bench dev hook), main-thread time per data update (render,
//     commit, effects, style and layout; see renderer/views/bench/ChartBenchView.tsx). The reference,
//     measured in the same page the same way, is bare DOM code setting the `points` of 50 SVG
//     polylines: what drawing the same lines costs with no framework and no chart library.
//  2. Time from server ready to the first chart painted: a real server (its own sampler, default
//     settings), a fresh page opened through the sign-in link, until the workers chart has a line.
//   node --import tsx bench/ui.ts [--quick]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { buildServer } from '../server/app.ts';
import { resolveConfig } from '../server/config.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const UI_DIR = path.join(REPO, 'dist/renderer');
const GOAL_FRAME_MS = 16;
const SERIES = 50;
const POINTS = 1000;

export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  reference: number;
  ratio: number;
  goal: string;
  pass: boolean;
  [extra: string]: unknown;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const round = (x: number) => Math.round(x * 100) / 100;

/** Bare reference, run inside the page: 50 polylines redrawn by plain DOM code. Kept as source
 *  text because tsx's transform adds helpers (__name) that do not exist in the page. */
const BARE_REDRAW = `async (series, points, times) => {
  const hop = () => new Promise((r) => { const ch = new MessageChannel(); ch.port1.onmessage = () => r(); ch.port2.postMessage(0); });
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('width', '1200'); svg.setAttribute('height', '420');
  svg.style.cssText = 'position:fixed;top:0;left:0;background:white';
  document.body.appendChild(svg);
  const lines = Array.from({ length: series }, () => {
    const l = document.createElementNS(NS, 'polyline');
    l.setAttribute('fill', 'none'); l.setAttribute('stroke', '#3b82f6');
    svg.appendChild(l);
    return l;
  });
  let seed = 42;
  const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  const out = [];
  for (let n = 0; n < times; n++) {
    const start = performance.now();
    for (const l of lines) {
      let v = rand() * 100;
      const pts = new Array(points);
      for (let i = 0; i < points; i++) {
        v = Math.max(0, v + (rand() - 0.5) * 10);
        pts[i] = ((i / (points - 1)) * 1200).toFixed(1) + ',' + (420 - v * 2).toFixed(1);
      }
      l.setAttribute('points', pts.join(' '));
    }
    await hop(); await hop();
    void document.body.getBoundingClientRect().height;
    out.push(performance.now() - start);
    await new Promise((r) => requestAnimationFrame(r));
  }
  svg.remove();
  return out;
}`;

export async function run({ quick = false }: { quick?: boolean } = {}): Promise<BenchResult> {
  if (!fs.existsSync(path.join(UI_DIR, 'index.html'))) throw new Error('dist/renderer is missing: run `npx vite build` first');
  const redraws = quick ? 15 : 60;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-ui-'));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  let server: Awaited<ReturnType<typeof buildServer>> | undefined;
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const config = resolveConfig({ port: 0, logLevel: 'silent', dataDir, uiDir: UI_DIR }, {});
    const t0 = performance.now();
    server = await buildServer(config);
    const url = await server.listen();
    const ready = performance.now();
    await page.goto(`${url}/#token=${server.ctx.store.adminToken}`);
    // 'attached', not 'visible': a flat line (constant concurrency) has a zero-height box.
    await page.locator('[data-testid="chart-workers"] path.series-line[d]').first().waitFor({ state: 'attached', timeout: 60_000 });
    const firstChartMs = performance.now() - ready;
    const startupMs = ready - t0;

    await page.evaluate(() => (location.hash = `/bench?series=50&points=1000`));
    await page.waitForFunction(() => window.__jobscopeBench?.ready === true);
    await page.locator('[data-testid="chart-bench"] path.series-line').nth(SERIES - 1).waitFor({ state: 'attached' });
    await page.evaluate((n) => window.__jobscopeBench!.redraw(n), 3); // warm-up: JIT, caches
    const ours = await page.evaluate((n) => window.__jobscopeBench!.redraw(n), redraws);
    const drawn = await page.locator('[data-testid="chart-bench"] path.series-line').count();
    if (drawn !== SERIES) throw new Error(`the bench chart drew ${drawn} lines, expected ${SERIES}`);
    const bareIn = (n: number) => page.evaluate(`(${BARE_REDRAW})(${SERIES}, ${POINTS}, ${n})`) as Promise<number[]>;
    await bareIn(3);
    const bare = await bareIn(redraws);

    const p50 = pct(ours, 50);
    const p95 = pct(ours, 95);
    const r50 = pct(bare, 50);
    return {
      name: `ui: dashboard chart redraw, ${SERIES} series × ${POINTS.toLocaleString('en-US')} points (p50)`,
      value: round(p50),
      unit: 'ms',
      reference: round(r50),
      ratio: round(p50 / r50),
      goal: `< ${GOAL_FRAME_MS} ms a frame`,
      pass: p50 < GOAL_FRAME_MS,
      p95_ms: round(p95),
      reference_p95_ms: round(pct(bare, 95)),
      ratio_note: 'ratio = recharts chart p50 / bare DOM polylines p50, same page, same measure (lower is better)',
      redraws,
      first_chart_ms: Math.round(firstChartMs),
      first_chart_note: 'server ready (listening) → first chart line painted in a fresh page opened with the sign-in link',
      server_startup_ms: Math.round(startupMs),
    };
  } finally {
    await browser.close();
    if (server) await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await run({ quick: process.argv.includes('--quick') });
  process.stdout.write(
    `${r.name}\n  jobscope chart: p50 ${r.value} ms, p95 ${r.p95_ms} ms (${r.redraws} redraws)\n` +
      `  bare DOM polylines: p50 ${r.reference} ms, p95 ${r.reference_p95_ms} ms\n  ratio (p50): ${r.ratio}×   goal ${r.goal}: ${r.pass ? 'PASS' : 'FAIL'}\n` +
      `  first chart painted ${r.first_chart_ms} ms after the server was ready (server start ${r.server_startup_ms} ms)\n`,
  );
}
