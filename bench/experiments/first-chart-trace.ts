// Probe, not a benchmark (nothing is judged): where one warm first chart's time goes on the page's
// main thread. Three fresh servers and pages as bench/ui.ts opens them; the third is traced (Chromium's
// timeline and its sampling profiler), and the renderer's top-level tasks up to the chart's marker are
// printed with what ran inside them, then the sampled time by script and by function.
//   node --import tsx bench/experiments/first-chart-trace.ts      (after `npx vite build`)
//   … --bare: the same for the bare reference page (bench/reference/first-chart-server.ts), to set
//   ours (React, the shell, the app's scripts) against what Chromium alone spends.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright';
import { buildServer } from '../../server/app.ts';
import { resolveConfig } from '../../server/config.ts';
import { startFirstChartReference } from '../reference/first-chart-server.ts';

const MARK = '[data-testid="chart-workers"] canvas.series-canvas li';
const TRACE = path.join(os.tmpdir(), 'jobscope-first-chart-trace.json');
const BARE = process.argv.includes('--bare');

interface TraceEvent { name: string; ph: string; ts: number; dur?: number; pid: number; tid: number; id?: string; args?: { data?: Record<string, unknown> } }
interface ProfileNode { id: number; parent?: number; callFrame: { functionName: string; url: string; lineNumber: number } }

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-first-chart-'));
try {
  for (let i = 0; i < 3; i++) {
    const server = BARE ? await startFirstChartReference() : await buildServer(resolveConfig({ port: 0, logLevel: 'silent', dataDir: path.join(dir, `d${i}`), uiDir: path.resolve('dist/renderer') }, {}));
    const url = 'url' in server ? `${server.url}/` : `${await server.listen()}/#token=${server.ctx.store.adminToken}`;
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    // A user-timing mark when the marker appears: the trace's clock for "the chart is there".
    await context.addInitScript((sel) => {
      const o = new MutationObserver(() => {
        if (document.querySelector(sel)) {
          performance.mark('chart');
          o.disconnect();
        }
      });
      o.observe(document, { subtree: true, childList: true });
    }, MARK);
    const page = await context.newPage();
    const traced = i === 2;
    if (traced) await browser.startTracing(page, { path: TRACE, categories: ['devtools.timeline', 'blink.user_timing', 'v8.execute', 'disabled-by-default-devtools.timeline', 'loading', 'disabled-by-default-v8.cpu_profiler'] });
    await page.goto(url, { waitUntil: 'commit' });
    await page.locator(MARK).first().waitFor({ state: 'attached' });
    if (traced) await browser.stopTracing();
    await context.close();
    await server.close();
  }
} finally {
  await browser.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

const events = (JSON.parse(fs.readFileSync(TRACE, 'utf8')) as { traceEvents: TraceEvent[] }).traceEvents;
const nav = events.find((e) => e.name === 'navigationStart' && String(e.args?.data?.documentLoaderURL ?? '').startsWith('http'));
const chart = events.find((e) => e.name === 'chart');
if (!nav || !chart) throw new Error('no navigation or no chart mark in the trace');
const onMain = (e: TraceEvent) => e.pid === nav.pid && e.tid === nav.tid && e.ph === 'X' && e.ts >= nav.ts && e.ts <= chart.ts;
const tasks = events.filter((e) => e.name === 'RunTask' && onMain(e));
const ms = (us: number) => (us / 1000).toFixed(1);
console.log(`chart ${ms(chart.ts - nav.ts)} ms after navigation start; main thread busy ${ms(tasks.reduce((s, e) => s + (e.dur ?? 0), 0))} ms of it`);
for (const t of tasks.filter((e) => (e.dur ?? 0) > 2000)) {
  const inside = events.filter((k) => onMain(k) && k.name !== 'RunTask' && k.ts >= t.ts && k.ts < t.ts + t.dur! && (k.dur ?? 0) > 1500);
  console.log(`${ms(t.ts - nav.ts).padStart(7)} ${ms(t.dur!).padStart(6)}  ${inside.map((k) => `${k.name} ${ms(k.dur!)}`).slice(0, 6).join(' | ')}`);
}

// The renderer's sampling profile (ProfileChunk events), over navigation start → chart.
const nodes = new Map<number, ProfileNode>();
const self = new Map<number, number>();
const profile = events.find((e) => e.name === 'Profile' && e.pid === nav.pid);
let ts = Number((profile?.args?.data as { startTime?: number } | undefined)?.startTime ?? 0);
for (const c of events.filter((e) => e.name === 'ProfileChunk' && e.pid === nav.pid && e.id === profile?.id)) {
  const d = c.args!.data as { cpuProfile?: { nodes?: ProfileNode[]; samples?: number[] }; timeDeltas?: number[] };
  for (const n of d.cpuProfile?.nodes ?? []) nodes.set(n.id, n);
  const samples = d.cpuProfile?.samples ?? [];
  samples.forEach((s, k) => {
    const dt = d.timeDeltas?.[k] ?? 0;
    ts += dt;
    if (ts >= nav.ts && ts <= chart.ts) self.set(s, (self.get(s) ?? 0) + dt);
  });
}
const byScript = new Map<string, number>();
const byFunction = new Map<string, number>();
for (const [id, t] of self) {
  const f = nodes.get(id)?.callFrame;
  if (!f) continue;
  const script = f.url ? f.url.replace(/^.*\//, '') : `(native) ${f.functionName}`;
  byScript.set(script, (byScript.get(script) ?? 0) + t);
  const fn = `${f.functionName || '(anonymous)'} ${script}:${f.lineNumber}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + t);
}
const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${ms(v).padStart(7)}  ${k}`).join('\n');
console.log(`\nsampled, by script:\n${top(byScript, 12)}\n\nby function:\n${top(byFunction, 20)}`);
