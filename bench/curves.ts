// Scale curves (`npm run bench -- --curves [--quick]`): four benchmarks of bench/ run at growing sizes,
// each point against its bare reference measured in the same run, plotted as small PNGs so a reader
// sees how cost grows with work. A full run writes docs/benchmarks/*.png, docs/benchmarks/README.md and
// bench/curves.json; a quick run (small sizes, short rounds) writes them under .tmp/bench-curves/, so
// no PNG from a quick run lands in docs by mistake.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO, round, type BenchResult } from './lib/harness.ts';
import { png, type Chart } from './lib/plot.ts';

interface Curve {
  file: string;
  title: string;
  xLabel: string;
  yLabel: string;
  logY?: boolean;
  sizes: { full: number[]; quick: number[] };
  /** Runs the bench at one size; the line plotted is the first it returns. */
  point(size: number, quick: boolean): Promise<BenchResult>;
}

type Runner<O> = { run(opts: O): Promise<BenchResult | BenchResult[]> };
const first = (r: BenchResult | BenchResult[]) => (Array.isArray(r) ? r[0]! : r);
const load = async <O>(file: string) => (await import(`./${file}`)) as Runner<O>;

export const CURVES: Curve[] = [
  {
    file: 'traces.ts',
    title: 'Trace appends: 4 KiB parts, each stream waits for its 202',
    xLabel: 'concurrent streams',
    yLabel: 'parts/s',
    sizes: { full: [8, 32, 128, 512], quick: [4, 16] },
    point: async (streams, quick) => first(await (await load<object>('traces.ts')).run({ quick, streams, seconds: quick ? 1 : 3, rounds: quick ? 1 : 2 })),
  },
  {
    file: 'dispatch.ts',
    title: 'Dispatch: runners polling builds/register until none is left',
    xLabel: 'runners',
    yLabel: 'builds/s',
    sizes: { full: [50, 200, 1000], quick: [10, 50] },
    point: async (runners, quick) => first(await (await load<object>('dispatch.ts')).run({ quick, runners, paced: false })),
  },
  {
    file: 'metrics.ts',
    title: 'compound_metrics p99 (500 processes), one connection',
    xLabel: 'queues',
    yLabel: 'p99 latency, ms',
    logY: true,
    sizes: { full: [100, 1000, 10_000], quick: [100, 300] },
    point: async (queues, quick) => first(await (await load<object>('metrics.ts')).run({ quick, queues, calls: quick ? 100 : 600 })),
  },
  {
    file: 'history.ts',
    title: 'History: 5 s samples × 50 queues to ≤ 1,000 points, p99',
    xLabel: 'days of history',
    yLabel: 'p99 latency, ms',
    logY: true,
    sizes: { full: [1, 7, 30], quick: [1, 2] },
    point: async (days, quick) => first(await (await load<object>('history.ts')).run({ quick, days, repeats: quick ? 20 : 100 })),
  },
];

export interface CurvePoint {
  size: number;
  value?: number;
  reference?: number;
  ratio?: number;
  unit?: string;
  name?: string;
  error?: string;
  load_average: number[];
  seconds: number;
}

export function chartOf(c: Curve, points: CurvePoint[]): Chart {
  const ok = points.filter((p) => p.value !== undefined);
  const loads = ok.map((p) => p.load_average[0]!);
  return {
    title: c.title,
    subtitle: loads.length ? `1-min load average ${Math.min(...loads)}–${Math.max(...loads)} on ${os.cpus().length} cores while measured` : undefined,
    xLabel: c.xLabel,
    yLabel: c.yLabel,
    logX: true,
    logY: c.logY,
    series: [
      { label: 'Jobscope', color: '#1f6feb', points: ok.map((p) => ({ x: p.size, y: p.value! })) },
      { label: 'bare reference (same run)', color: '#8a8a8a', dashed: true, points: ok.map((p) => ({ x: p.size, y: p.reference! })) },
    ],
  };
}

function readme(out: { date: string; command: string; seconds: number; curves: Record<string, CurvePoint[]> }): string {
  const rows = CURVES.flatMap((c) => {
    const name = c.file.replace(/\.ts$/, '');
    return (out.curves[name] ?? []).map((p) => `| ${name} | ${p.size.toLocaleString('en')} | ${p.error ? `failed: ${p.error}` : `${p.value} ${p.unit}`} | ${p.reference ?? ''} | ${p.ratio === undefined ? '' : `${p.ratio}×`} | ${p.load_average.join(' / ')} |`);
  });
  return [
    '# Scale curves',
    '',
    `Made by \`${out.command}\` on ${out.date} (${round(out.seconds, 0)} s), Jobscope against the bare reference of each benchmark measured in the same run at each size (see docs/benchmarks.md for what each reference is).`,
    '',
    ...CURVES.map((c) => `![${c.title}](${c.file.replace(/\.ts$/, '')}.png)`),
    '',
    '| curve | size | Jobscope | reference | ratio | load average at the point (1 / 5 / 15 min) |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    'A point that failed is listed with its error and left out of the plot. Raw figures: `bench/curves.json`.',
    '',
  ].join('\n');
}

/** Redraws the PNGs from curves.json, without measuring (`--curves --replot`): for a change of the plot alone. */
function replot(outDir: string, jsonPath: string): void {
  const { curves } = JSON.parse(fs.readFileSync(jsonPath, 'utf8')) as { curves: Record<string, CurvePoint[]> };
  for (const c of CURVES) {
    const name = c.file.replace(/\.ts$/, '');
    if (!curves[name]?.some((p) => p.value !== undefined)) continue;
    fs.writeFileSync(path.join(outDir, `${name}.png`), png(chartOf(c, curves[name])));
    console.log(`wrote ${path.relative(REPO, path.join(outDir, `${name}.png`))}`);
  }
}

export async function runCurves({ quick = false, only, command, replot: redraw = false }: { quick?: boolean; only?: string[]; command: string; replot?: boolean }): Promise<void> {
  const outDir = quick ? path.join(REPO, '.tmp/bench-curves') : path.join(REPO, 'docs/benchmarks');
  const jsonPath = quick ? path.join(outDir, 'curves.json') : path.join(REPO, 'bench/curves.json');
  fs.mkdirSync(outDir, { recursive: true });
  if (redraw) return replot(outDir, jsonPath);
  const began = performance.now();
  // A run of some curves (--only) keeps the others' last points.
  const curves: Record<string, CurvePoint[]> = fs.existsSync(jsonPath) ? (JSON.parse(fs.readFileSync(jsonPath, 'utf8')) as { curves: Record<string, CurvePoint[]> }).curves : {};
  for (const c of CURVES) {
    const name = c.file.replace(/\.ts$/, '');
    if (only && !only.includes(name)) continue;
    const points: CurvePoint[] = (curves[name] = []);
    for (const size of quick ? c.sizes.quick : c.sizes.full) {
      const t0 = performance.now();
      const load_average = os.loadavg().map((x) => round(x, 1));
      console.log(`▶ curve ${name} at ${size}${quick ? ' --quick' : ''} (load ${load_average.join(' / ')})`);
      try {
        const r = await c.point(size, quick);
        points.push({ size, value: r.value, reference: r.reference, ratio: r.ratio, unit: r.unit, name: r.name, load_average, seconds: round((performance.now() - t0) / 1000, 1) });
        console.log(`  ${r.name}: ${r.value} ${r.unit} (reference ${r.reference}, ratio ${r.ratio}×)`);
      } catch (err) {
        const error = (err as Error).message.split('\n')[0]!;
        points.push({ size, error, load_average, seconds: round((performance.now() - t0) / 1000, 1) });
        console.log(`  ✗ failed: ${error}`);
      }
    }
    if (points.some((p) => p.value !== undefined)) {
      fs.writeFileSync(path.join(outDir, `${name}.png`), png(chartOf(c, points)));
      console.log(`  wrote ${path.relative(REPO, path.join(outDir, `${name}.png`))}`);
    }
  }
  const out = { date: new Date().toISOString(), command, quick, seconds: round((performance.now() - began) / 1000, 1), curves };
  fs.writeFileSync(jsonPath, JSON.stringify(out, null, 2) + '\n');
  fs.writeFileSync(path.join(outDir, 'README.md'), readme(out));
  console.log(`Wrote ${path.relative(REPO, jsonPath)} and ${path.relative(REPO, outDir)}/README.md; ${round(out.seconds, 0)} s.`);
}
