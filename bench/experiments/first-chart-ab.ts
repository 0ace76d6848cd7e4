// A/B of the first chart (bench/ui.ts first_chart_ms) between built renderers: each round times a
// fresh page of every side's build (a fresh server each) and of the bare page
// (bench/reference/first-chart-server.ts), in an order that rotates every round; each side's figure
// is its ratio to the bare page's of the same round, since the machine's speed moves between rounds:
// from the server's ready (as bench/ui.ts reports it) and on the page's own clock (pageMs).
//   node --import tsx bench/experiments/first-chart-ab.ts <rounds> <label>=<ui dir>...
//   (a ui dir: `npx vite build --outDir <dir>` in a checkout)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bareFirstChart, launchBenchChromium, ourFirstChart } from '../ui.ts';

const args = process.argv.slice(2);
const rounds = Number(args[0]);
const sides = args.slice(1).map((a) => ({ label: a.slice(0, a.indexOf('=')), dir: path.resolve(a.slice(a.indexOf('=') + 1)) }));
if (!(rounds > 0) || !sides.length || sides.some((s) => !s.label || !fs.existsSync(path.join(s.dir, 'index.html')))) {
  console.error('usage: first-chart-ab.ts <rounds> <label>=<built ui dir with index.html>...');
  process.exit(2);
}

const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
};
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-first-chart-ab-'));
const browser = await launchBenchChromium();
const ratios = new Map<string, number[]>(sides.map((s) => [s.label, []]));
const pageRatios = new Map<string, number[]>(sides.map((s) => [s.label, []]));
try {
  await bareFirstChart(browser); // warm-up: Chromium's first renderer process and disk caches
  const runs: { label: string; run: () => Promise<{ ms: number; pageMs: number | null }> }[] = [
    { label: 'bare', run: () => bareFirstChart(browser) },
    ...sides.map((s) => ({ label: s.label, run: () => ourFirstChart(browser, s.dir, dataDir) })),
  ];
  for (let i = 0; i < rounds; i++) {
    const order = [...runs.slice(i % runs.length), ...runs.slice(0, i % runs.length)];
    const ms = new Map<string, number>();
    const page = new Map<string, number>();
    for (const r of order) {
      const got = await r.run();
      ms.set(r.label, got.ms);
      page.set(r.label, got.pageMs ?? NaN);
    }
    for (const s of sides) {
      ratios.get(s.label)!.push(ms.get(s.label)! / ms.get('bare')!);
      pageRatios.get(s.label)!.push(page.get(s.label)! / page.get('bare')!);
    }
    const each = (m: Map<string, number>) => order.map((r) => `${r.label} ${Math.round(m.get(r.label)!)}`).join(', ');
    console.log(`round ${i + 1} (load ${os.loadavg()[0]!.toFixed(1)}): from ready ${each(ms)} ms; page clock ${each(page)} ms`);
  }
  const line = (r: number[]) => `median ${median(r).toFixed(2)}× (min ${Math.min(...r).toFixed(2)}, max ${Math.max(...r).toFixed(2)})`;
  for (const s of sides) console.log(`${s.label}, ${rounds} rounds, against the bare page: from ready ${line(ratios.get(s.label)!)}; page clock ${line(pageRatios.get(s.label)!)}`);
} finally {
  await browser.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
