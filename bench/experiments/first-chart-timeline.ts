// Probe, not a benchmark (nothing is judged): one first chart's timeline on the page's own clock, per
// built renderer: when the document, the history answer, the main chunk, the style sheets and the
// dashboard's chunk arrived (resource timings), when parsing ended (readyState "interactive"), when
// DOMContentLoaded came, the long tasks, and when the chart's marker appeared. It showed what the
// early chart waited for after the history's answer (the entry style sheet's request, a long task).
//   node --import tsx bench/experiments/first-chart-timeline.ts <loads> <built ui dir>...
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildServer } from '../../server/app.ts';
import { resolveConfig } from '../../server/config.ts';
import { launchBenchChromium } from '../ui.ts';
const [n, ...dirs] = process.argv.slice(2);
if (!(Number(n) > 0) || !dirs.length || dirs.some((d) => !fs.existsSync(path.join(d, 'index.html')))) {
  console.error('usage: first-chart-timeline.ts <loads> <built ui dir with index.html>...');
  process.exit(2);
}
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-first-chart-timeline-'));
const browser = await launchBenchChromium();
const CHART_MARKER = '[data-testid="chart-workers"] canvas.series-canvas li';
/** The chart's moment, the long tasks and the end of parsing, noted by the page itself. */
const MARK = `new MutationObserver((_, o) => { if (!document.querySelector(${JSON.stringify(CHART_MARKER)})) return; window.__chartAt = performance.now(); o.disconnect(); }).observe(document, { subtree: true, childList: true });
window.__long = []; new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push([Math.round(e.startTime), Math.round(e.duration)]); }).observe({ type: 'longtask', buffered: true });
document.addEventListener('readystatechange', () => (window['__rs_' + document.readyState] = performance.now()));`;
try {
  for (let i = 0; i < Number(n); i++) for (const dir of dirs) await load(dir);
} finally {
  await browser.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

async function load(dir: string) {
  const server = await buildServer(resolveConfig({ port: 0, logLevel: 'silent', dataDir: fs.mkdtempSync(path.join(dataDir, 'd-')), uiDir: dir }, {}));
  const url = await server.listen();
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  try {
    await ctx.addInitScript(MARK);
    const page = await ctx.newPage();
    await page.goto(`${url}/#token=${server.ctx.store.adminToken}`, { waitUntil: 'commit' });
    await page.locator(CHART_MARKER).first().waitFor({ state: 'attached', timeout: 60000 });
    const r = await page.evaluate(() => {
      const w = window as unknown as Record<string, unknown>;
      const res = performance.getEntriesByType('resource').map((e) => { const t = e as PerformanceResourceTiming; return `${t.name.replace(/^.*\//, '').slice(0, 22)} ${Math.round(t.startTime)}-${Math.round(t.responseEnd)}`; });
      const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      return { chart: Math.round(w.__chartAt as number), doc: Math.round(nav.responseEnd), interactive: Math.round(w.__rs_interactive as number), dcl: Math.round(nav.domContentLoadedEventStart), long: w.__long, res: res.filter((x) => /history|index-|Dashboard|\.css/.test(x)) };
    });
    console.log(path.basename(dir), `(load ${os.loadavg()[0]!.toFixed(1)})`, JSON.stringify(r));
  } finally {
    await ctx.close();
    await server.close();
  }
}
