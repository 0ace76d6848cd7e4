// Probe, not a benchmark (nothing is judged): where a chart redraw's main-thread time goes. The
// bench chart (#/bench?series=50&points=1000, as bench/ui.ts) is redrawn 40 times under Chromium's
// tracing, with layout invalidation tracking; printed: the redraw times, what the renderer's main
// thread spent per redraw by trace event, how many layout objects each layout had dirty, and what
// invalidated them (text changed, SVG resources, nodes added or removed).
//   node --import tsx bench/experiments/redraw-trace.ts [ui dir, default dist/renderer]   (after `npx vite build`)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright';
import { buildServer } from '../../server/app.ts';
import { resolveConfig } from '../../server/config.ts';

interface TraceEvent { name: string; ph: string; dur?: number; pid: number; tid: number; args?: { beginData?: { dirtyObjects?: number; totalObjects?: number }; data?: { reason?: string; nodeName?: string } } }
const REDRAWS = 40;

const uiDir = path.resolve(process.argv[2] ?? 'dist/renderer');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-redraw-'));
const server = await buildServer(resolveConfig({ port: 0, logLevel: 'silent', dataDir: dir, uiDir }, {}));
try {
  const url = await server.listen();
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(`${url}/#token=${server.ctx.store.adminToken}`);
  await page.evaluate(() => (location.hash = `/bench?series=50&points=1000`));
  await page.waitForFunction(() => window.__jobscopeBench?.ready === true, undefined, { timeout: 120_000 });
  await page.evaluate(() => window.__jobscopeBench!.redraw(10)); // warm-up
  const file = path.join(dir, 'trace.json');
  await browser.startTracing(page, {
    path: file,
    categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'disabled-by-default-devtools.timeline.invalidationTracking', 'blink', 'v8'],
  });
  const times = await page.evaluate((n) => window.__jobscopeBench!.redraw(n), REDRAWS);
  await browser.stopTracing();
  times.sort((a, b) => a - b);
  console.log(`redraw p50 ${times[REDRAWS / 2]!.toFixed(1)} ms, p95 ${times[Math.floor(REDRAWS * 0.95)]!.toFixed(1)} ms (under tracing)`);
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { traceEvents?: TraceEvent[] } | TraceEvent[];
  const events = Array.isArray(parsed) ? parsed : (parsed.traceEvents ?? []);
  // The renderer's main thread: the one that ran the most script.
  const calls = new Map<string, number>();
  for (const e of events) if (e.name === 'FunctionCall') calls.set(`${e.pid}/${e.tid}`, (calls.get(`${e.pid}/${e.tid}`) ?? 0) + 1);
  const main = [...calls].sort((a, b) => b[1] - a[1])[0]?.[0];
  const onMain = events.filter((e) => `${e.pid}/${e.tid}` === main);
  const spent = new Map<string, number>();
  for (const e of onMain) if (e.ph === 'X' && e.dur) spent.set(e.name, (spent.get(e.name) ?? 0) + e.dur / 1000);
  console.log('\nmain thread, ms per redraw, by trace event (nested events count in their parents too):');
  for (const [k, v] of [...spent].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${(v / REDRAWS).toFixed(2).padStart(7)}  ${k}`);
  const layouts = onMain.filter((e) => e.name === 'Layout' && e.ph === 'X').map((e) => e.args?.beginData);
  if (layouts.length) console.log(`\nlayouts: ${layouts.length}, dirty objects of total: ${layouts.slice(0, 5).map((b) => `${b?.dirtyObjects}/${b?.totalObjects}`).join(', ')}…`);
  const why = new Map<string, number>();
  for (const e of events) if (e.name === 'LayoutInvalidationTracking') { const k = `${e.args?.data?.reason ?? '?'} (${e.args?.data?.nodeName ?? '?'})`; why.set(k, (why.get(k) ?? 0) + 1); }
  console.log('\nlayout invalidations per redraw:');
  for (const [k, v] of [...why].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`${(v / REDRAWS).toFixed(1).padStart(7)}  ${k}`);
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
