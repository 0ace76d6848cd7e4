// Benchmark: the dashboard in Chromium (browser mode), two figures from one run.
//  1. Redraw cost with 50 series × 1,000 points (p95 under 10 ms): the dashboard's chart
//     component on synthetic data (the #/bench dev hook), main-thread time per data update (render,
//     commit, effects, style and layout; see renderer/views/bench/ChartBenchView.tsx). The reference,
//     measured in the same page the same way, is bare DOM code setting the `points` of 50 SVG
//     polylines: what drawing the same lines costs with no framework and no chart library; a second
//     one strokes the same lines on a bare 2D canvas, the technique the chart itself uses.
//  2. Time from server ready to the first chart painted (alternating rounds with a bare reference,
//     bench/reference/first-chart-server.ts): a real server (its own sampler, default
//     settings), a fresh page opened through the sign-in link, until the workers chart has a line.
//   node --import tsx bench/ui.ts [--quick] [--ui-dir=<a built renderer, e.g. of another commit>]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { buildServer } from '../server/app.ts';
import { resolveConfig } from '../server/config.ts';
import { percentile, round as roundTo, type BenchResult } from './lib/harness.ts';
import { startFirstChartReference } from './reference/first-chart-server.ts';

/** The harness's nearest-rank percentile over a copy sorted here. */
const pct = (xs: number[], p: number) => percentile([...xs].sort((a, b) => a - b), p);
const round = (x: number) => roundTo(x, 2);

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_UI_DIR = path.join(REPO, 'dist/renderer');
// The goals' bounds against the references measured in the same run (the machine's speed moves 3× within an
// hour): a redraw's p95 against the bare canvas's, the first chart against the bare page's.
const GOAL_P95_CANVAS_RATIO = 1.1;
const GOAL_FIRST_CHART_RATIO = 1.3;
const SERIES = 50;
const POINTS = 1000;

export type { BenchResult };


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
  // Each redraw's data is made before its interval: only drawing is timed (as the chart's bench does).
  const walks = () => lines.map(() => { let v = rand() * 100; const ys = new Float64Array(points); for (let i = 0; i < points; i++) { v = Math.max(0, v + (rand() - 0.5) * 10); ys[i] = v; } return ys; });
  const out = [];
  for (let n = 0; n < times; n++) {
    const data = walks();
    const start = performance.now();
    for (let s = 0; s < lines.length; s++) {
      const ys = data[s];
      const pts = new Array(points);
      for (let i = 0; i < points; i++) pts[i] = ((i / (points - 1)) * 1200).toFixed(1) + ',' + (420 - ys[i] * 2).toFixed(1);
      lines[s].setAttribute('points', pts.join(' '));
    }
    await hop(); await hop();
    void document.body.getBoundingClientRect().height;
    out.push(performance.now() - start);
    await new Promise((r) => requestAnimationFrame(r));
  }
  svg.remove();
  return out;
}`;

/** Second bare reference: the same lines drawn on a 2D canvas by plain code (no framework, no
 *  axes, no per-pixel reduction, no text alternative): what the chart's own technique costs at its
 *  floor. Sized as the bench chart's plot area (1,400 px viewport). */
const BARE_CANVAS = `async (series, points, times) => {
  const hop = () => new Promise((r) => { const ch = new MessageChannel(); ch.port1.onmessage = () => r(); ch.port2.postMessage(0); });
  const W = 1250, H = 380, dpr = window.devicePixelRatio || 1;
  const canvas = document.createElement('canvas');
  canvas.width = W * dpr; canvas.height = H * dpr;
  canvas.style.cssText = 'position:fixed;top:0;left:0;background:white;width:' + W + 'px;height:' + H + 'px';
  document.body.appendChild(canvas);
  const ctx = canvas.getContext('2d');
  let seed = 42;
  const rand = () => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  const walks = () => Array.from({ length: series }, () => { let v = rand() * 100; const ys = new Float64Array(points); for (let i = 0; i < points; i++) { v = Math.max(0, v + (rand() - 0.5) * 10); ys[i] = v; } return ys; });
  const out = [];
  for (let n = 0; n < times; n++) {
    const data = walks();
    const start = performance.now();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    for (let s = 0; s < series; s++) {
      const ys = data[s];
      ctx.beginPath();
      for (let i = 0; i < points; i++) {
        const x = (i / (points - 1)) * W, y = H - ys[i] * 2;
        if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      }
      ctx.strokeStyle = '#3b82f6'; ctx.lineWidth = 1;
      ctx.stroke();
    }
    await hop(); await hop();
    void document.body.getBoundingClientRect().height;
    out.push(performance.now() - start);
    await new Promise((r) => requestAnimationFrame(r));
  }
  canvas.remove();
  return out;
}`;

type CpuSnapshot = Map<string, { ns: number; main: boolean }>;

/** CPU time (ns, from /proc/<pid>/task/<tid>/schedstat) of Chromium's processes under this one:
 *  the renderers' main threads, and every thread of every Chromium process (compositor, raster,
 *  display). Why beside the wall clock: on a loaded machine (load average ~10 on 2 cores) most of a
 *  redraw's wall time is spent waiting for a core; CPU time is what the redraw itself costs.
 *  Linux only: elsewhere null, and only the wall-clock figures are reported. Per thread, so that
 *  cpuBetween counts a thread that ended between two snapshots (a closed page's renderer) as
 *  nothing rather than as a negative. */
export function chromiumCpu(): CpuSnapshot | null {
  if (process.platform !== 'linux') return null;
  const children = new Map<number, number[]>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // the process ended while we looked
    }
  }
  const out: CpuSnapshot = new Map();
  const todo = [...(children.get(process.pid) ?? [])];
  while (todo.length) {
    const pid = todo.pop()!;
    todo.push(...(children.get(pid) ?? []));
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('chrom')) continue;
      const renderer = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer');
      for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        const ns = Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
        out.set(`${pid}/${tid}`, { ns, main: renderer && Number(tid) === pid });
      }
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU (ns) spent between two snapshots by the threads alive at the second: all, and the renderers' main threads. */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot): { main: number; all: number } {
  const out = { main: 0, all: 0 };
  for (const [id, t] of b) {
    const d = t.ns - (a.get(id)?.ns ?? 0);
    out.all += d;
    if (t.main) out.main += d;
  }
  return out;
}

/** Runs fn and returns its result with the Chromium CPU time it took, in ms per redraw. */
async function withCpu<T>(redraws: number, fn: () => Promise<T>): Promise<{ result: T; mainMs: number | null; allMs: number | null }> {
  const a = chromiumCpu();
  const result = await fn();
  const b = chromiumCpu();
  if (!a || !b) return { result, mainMs: null, allMs: null };
  const d = cpuBetween(a, b);
  return { result, mainMs: round(d.main / 1e6 / redraws), allMs: round(d.all / 1e6 / redraws) };
}

/** The first chart's marker: the canvas lists each series it drew inside itself (fallback content,
 *  never rendered), so 'attached' is when a line was drawn. The bare reference leaves the same. */
const CHART_MARKER = '[data-testid="chart-workers"] canvas.series-canvas li';

interface FirstChart { ms: number; cpuMs: number | null; cpuSettledMs: number | null; mainSettledMs: number | null }

/** One first chart: a fresh page (a new context, so a new renderer process for the site, as every
 *  window or e2e test gets) navigated to `url` once the server is listening, timed until the chart's
 *  marker is attached. Not waiting for the load event: the chart can be drawn before it (the early
 *  history, renderer/early.ts), and the clock stops when the chart is there, whatever load does.
 *  CPU: all Chromium threads (renderer, browser, GPU/display) from before the page opened to the
 *  marker, and to one second later (what the rest of the load costs), read before the page closes
 *  (its renderer's counters go with it). */
export async function firstChart(browser: Browser, ready: number, url: string): Promise<FirstChart> {
  const cpu0 = chromiumCpu();
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'commit' });
    await page.locator(CHART_MARKER).first().waitFor({ state: 'attached', timeout: 60_000 });
    const ms = performance.now() - ready;
    const cpu1 = chromiumCpu();
    await new Promise((r) => setTimeout(r, 1000));
    const cpu2 = chromiumCpu();
    const d = (b: typeof cpu1, k: 'all' | 'main' = 'all') => (cpu0 && b ? round(cpuBetween(cpu0, b)[k] / 1e6) : null);
    return { ms, cpuMs: d(cpu1), cpuSettledMs: d(cpu2), mainSettledMs: d(cpu2, 'main') };
  } finally {
    await context.close();
  }
}

/** Alternating rounds of ours (a fresh server and data directory each, timed from its
 *  listening) and of the bare reference (bench/reference/first-chart-server.ts), in turn first. */
async function firstChartRounds(browser: Browser, uiDir: string, dataDir: string, rounds: number) {
  const ours: FirstChart[] = [];
  const bare: FirstChart[] = [];
  const startups: number[] = [];
  const runOurs = async (i: number) => {
    const t0 = performance.now();
    const server = await buildServer(resolveConfig({ port: 0, logLevel: 'silent', dataDir: path.join(dataDir, `first-${i}`), uiDir }, {}));
    try {
      const url = await server.listen();
      const ready = performance.now();
      startups.push(ready - t0);
      ours.push(await firstChart(browser, ready, `${url}/#token=${server.ctx.store.adminToken}`));
    } finally {
      await server.close();
    }
  };
  const runBare = async () => {
    const ref = await startFirstChartReference();
    try {
      bare.push(await firstChart(browser, performance.now(), `${ref.url}/`));
    } finally {
      await ref.close();
    }
  };
  await runBare(); // warm-up: Chromium's first renderer process and disk caches, not counted
  bare.length = 0;
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) { await runOurs(i); await runBare(); } else { await runBare(); await runOurs(i); }
  }
  const stat = (xs: (number | null)[]) => {
    const v = xs.filter((x): x is number => x !== null);
    return v.length ? { median: round(pct(v, 50)), min: round(Math.min(...v)), max: round(Math.max(...v)) } : null;
  };
  return {
    ours: stat(ours.map((r) => r.ms))!,
    bare: stat(bare.map((r) => r.ms))!,
    oursCpu: stat(ours.map((r) => r.cpuMs)),
    bareCpu: stat(bare.map((r) => r.cpuMs)),
    oursCpuSettled: stat(ours.map((r) => r.cpuSettledMs)),
    bareCpuSettled: stat(bare.map((r) => r.cpuSettledMs)),
    oursMainSettled: stat(ours.map((r) => r.mainSettledMs)),
    bareMainSettled: stat(bare.map((r) => r.mainSettledMs)),
    startup: stat(startups)!,
    rounds,
  };
}

/** uiDir: a built renderer other than dist/renderer (an A/B against an older build, e.g.
 *  `npx vite build --outDir /tmp/ui-old` in a worktree of that commit). */
export async function run({ quick = false, uiDir = DEFAULT_UI_DIR }: { quick?: boolean; uiDir?: string } = {}): Promise<BenchResult> {
  const UI_DIR = uiDir;
  if (!fs.existsSync(path.join(UI_DIR, 'index.html'))) throw new Error(`${UI_DIR} has no index.html: run \`npx vite build\` first`);
  const redraws = quick ? 15 : 60;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-ui-'));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  let server: Awaited<ReturnType<typeof buildServer>> | undefined;
  try {
    const first = await firstChartRounds(browser, UI_DIR, dataDir, quick ? 3 : 5);
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const config = resolveConfig({ port: 0, logLevel: 'silent', dataDir: path.join(dataDir, 'redraw'), uiDir: UI_DIR }, {});
    server = await buildServer(config);
    const url = await server.listen();
    await page.goto(`${url}/#token=${server.ctx.store.adminToken}`, { waitUntil: 'commit' });
    await page.locator(CHART_MARKER).first().waitFor({ state: 'attached', timeout: 60_000 });

    await page.evaluate(() => (location.hash = `/bench?series=50&points=1000`));
    await page.waitForFunction(() => window.__jobscopeBench?.ready === true);
    const benchLines = page.locator('[data-testid="chart-bench"] canvas.series-canvas li.series-line');
    await benchLines.nth(SERIES - 1).waitFor({ state: 'attached' });
    await page.evaluate((n) => window.__jobscopeBench!.redraw(n), 3); // warm-up: JIT, caches
    const oursRun = await withCpu(redraws, () => page.evaluate((n) => window.__jobscopeBench!.redraw(n), redraws));
    const ours = oursRun.result;
    // What the drawing loop reports it drew after the last redraw: every series, every point.
    const drawn = await benchLines.evaluateAll((els) => els.map((e) => Number((e as HTMLElement).dataset.points)));
    if (drawn.length !== SERIES || drawn.some((n) => n !== POINTS)) throw new Error(`the bench chart drew ${drawn.length} lines (points: ${drawn.join(',')}), expected ${SERIES} of ${POINTS}`);
    const bareIn = (n: number) => page.evaluate(`(${BARE_REDRAW})(${SERIES}, ${POINTS}, ${n})`) as Promise<number[]>;
    await bareIn(3);
    const bareRun = await withCpu(redraws, () => bareIn(redraws));
    const bare = bareRun.result;
    const canvasIn = (n: number) => page.evaluate(`(${BARE_CANVAS})(${SERIES}, ${POINTS}, ${n})`) as Promise<number[]>;
    await canvasIn(3);
    const canvasRun = await withCpu(redraws, () => canvasIn(redraws));
    const bareCanvas = canvasRun.result;

    const p50 = pct(ours, 50);
    const p95 = pct(ours, 95);
    const r50 = pct(bare, 50);
    return {
      name: `ui: dashboard chart redraw, ${SERIES} series × ${POINTS.toLocaleString('en-US')} points (p50)`,
      value: round(p50),
      unit: 'ms',
      reference: round(r50),
      ratio: round(p50 / r50),
      goal: `p95 ≤ ${GOAL_P95_CANVAS_RATIO}× the bare canvas's p95; first chart ≤ ${GOAL_FIRST_CHART_RATIO}× the bare page's`,
      pass: p95 <= GOAL_P95_CANVAS_RATIO * pct(bareCanvas, 95) && first.ours.median <= GOAL_FIRST_CHART_RATIO * first.bare.median,
      p95_ms: round(p95),
      cpu_main_ms: oursRun.mainMs,
      reference_cpu_main_ms: bareRun.mainMs,
      cpu_all_ms: oursRun.allMs,
      reference_cpu_all_ms: bareRun.allMs,
      cpu_note: "CPU time per redraw (mean) of the renderer's main thread, and of all Chromium threads (compositor, raster, display included), from /proc schedstat",
      load_average: os.loadavg().map((x) => round(x)),
      reference_p95_ms: round(pct(bare, 95)),
      ratio_note: 'ratio = our chart p50 / bare DOM polylines p50, same page, same measure (lower is better)',
      canvas_reference_ms: round(pct(bareCanvas, 50)),
      canvas_reference_p95_ms: round(pct(bareCanvas, 95)),
      canvas_ratio: round(p50 / pct(bareCanvas, 50)),
      canvas_reference_cpu_main_ms: canvasRun.mainMs,
      canvas_reference_cpu_all_ms: canvasRun.allMs,
      canvas_note: 'second reference: the same 50 random walks stroked on a bare 2D canvas (no framework, axes or reduction); canvas_ratio = our p50 / its p50',
      redraws,
      first_chart_ms: Math.round(first.ours.median),
      first_chart_range_ms: [Math.round(first.ours.min), Math.round(first.ours.max)],
      first_chart_reference_ms: Math.round(first.bare.median),
      first_chart_reference_range_ms: [Math.round(first.bare.min), Math.round(first.bare.max)],
      first_chart_ratio: round(first.ours.median / first.bare.median),
      first_chart_rounds: first.rounds,
      first_chart_cpu_ms: first.oursCpu?.median ?? null,
      first_chart_reference_cpu_ms: first.bareCpu?.median ?? null,
      load_cpu_ms: first.oursCpuSettled?.median ?? null,
      load_cpu_range_ms: first.oursCpuSettled ? [first.oursCpuSettled.min, first.oursCpuSettled.max] : null,
      load_reference_cpu_ms: first.bareCpuSettled?.median ?? null,
      load_cpu_renderer_main_ms: first.oursMainSettled?.median ?? null,
      load_reference_cpu_renderer_main_ms: first.bareMainSettled?.median ?? null,
      first_chart_note: 'server ready (listening) → first chart line attached, in a fresh context (new renderer process) opened with the sign-in link; median of alternating rounds with the bare reference (bench/reference/first-chart-server.ts: node:http, inline script, one fetch, one canvas); cpu: all Chromium threads, to the chart and (load_cpu) to 1 s after it',
      server_startup_ms: Math.round(first.startup.median),
    };
  } finally {
    await browser.close();
    if (server) await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const uiArg = process.argv.find((a) => a.startsWith('--ui-dir='));
  const r = await run({ quick: process.argv.includes('--quick'), ...(uiArg ? { uiDir: path.resolve(uiArg.slice('--ui-dir='.length)) } : {}) });
  process.stdout.write(
    `${r.name}\n  jobscope chart: p50 ${r.value} ms, p95 ${r.p95_ms} ms (${r.redraws} redraws)\n` +
      `  bare DOM polylines: p50 ${r.reference} ms, p95 ${r.reference_p95_ms} ms\n` +
      `  bare canvas: p50 ${r.canvas_reference_ms} ms, p95 ${r.canvas_reference_p95_ms} ms; ratio (p50) ${r.canvas_ratio}×\n` +
      `  CPU per redraw (main thread / all Chromium threads): jobscope ${r.cpu_main_ms} / ${r.cpu_all_ms} ms, bare DOM ${r.reference_cpu_main_ms} / ${r.reference_cpu_all_ms} ms, bare canvas ${r.canvas_reference_cpu_main_ms} / ${r.canvas_reference_cpu_all_ms} ms\n` +
      `  load average ${(r.load_average as number[]).join(' ')}\n  ratio (p50) to bare DOM: ${r.ratio}×   goal ${r.goal}: ${r.pass ? 'PASS' : 'FAIL'}\n` +
      `  first chart ${r.first_chart_ms} ms after the server was ready (min-max ${(r.first_chart_range_ms as number[]).join('-')}, ${r.first_chart_rounds} rounds; server start ${r.server_startup_ms} ms)\n` +
      `  bare first chart ${r.first_chart_reference_ms} ms (min-max ${(r.first_chart_reference_range_ms as number[]).join('-')}); ratio ${r.first_chart_ratio}×\n` +
      `  Chromium CPU per load (all threads): to the chart ${r.first_chart_cpu_ms} ms (bare ${r.first_chart_reference_cpu_ms}), to 1 s after ${r.load_cpu_ms} ms (min-max ${(r.load_cpu_range_ms as number[] | null)?.join('-')}; bare ${r.load_reference_cpu_ms}), of which the renderer's main thread ${r.load_cpu_renderer_main_ms} ms (bare ${r.load_reference_cpu_renderer_main_ms})\n`,
  );
}
