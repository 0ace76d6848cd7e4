// `npm run bench [-- --quick] [-- --only traces,dispatch] [-- --cpu-prof] [-- --rounds N] [-- --compare
// [--against REV|FILE]]`: runs every benchmark of bench/ one after the other, so they never compete with each
// other, prints each figure beside its reference and goal, and writes bench/results.json and
// docs/benchmarks.md with the machine described. Each file runs N times (3, or 2 with --quick; once if
// it reports its own spread): every line is the median round with its min–max (bench/lib/rounds.ts).
// --compare then marks each line against the committed results (bench/lib/compare.ts) and exits 1 on a
// regression; --compare-only does that for the results.json already there, without running anything.
// `npm run bench -- --curves [--quick] [--only traces] [--replot]` runs the scale curves instead
// (bench/curves.ts); --replot redraws their PNGs from the last curve run's figures.
//
// Two cores: where the server under test (or the reference) is an HTTP server, it runs in a child
// process and the load generator in this one, so each gets a core. The Redis benches (sidekiq.ts,
// redis-jobs.ts) run ours and the bare loop in this process and redis-server in a child: their
// headers say why.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCurves } from './curves.ts';
import type { Spread } from './lib/compare.ts';
import { gate } from './lib/gate.ts';
import { REPO, round, type BenchResult } from './lib/harness.ts';
import { hasSpread, mergeRounds } from './lib/rounds.ts';

interface Entry {
  file: string;
  /** What the file measures, for the table when it fails before returning anything. */
  title: string;
}

// Ours first, then those other parts of the product bring (each is run only when its file exists).
const BENCHES: Entry[] = [
  { file: 'traces.ts', title: 'trace appends' },
  { file: 'dispatch.ts', title: 'dispatch' },
  { file: 'pg-dispatch.ts', title: 'dispatch on PostgreSQL (two instances vs SQLite vs bare SKIP LOCKED)' },
  { file: 'pg-traces.ts', title: 'trace appends on PostgreSQL (two instances vs SQLite vs bare)' },
  { file: 'wal.ts', title: 'WAL under writes' },
  { file: 'artifacts.ts', title: 'artifacts' },
  { file: 'metrics.ts', title: 'metrics (compound_metrics)' },
  { file: 'sidekiq.ts', title: 'sidekiq connection (a 1,000-queue Redis)' },
  { file: 'sidekiq-huge.ts', title: 'sidekiq connection: a 1M-queue Redis watched (another client\'s PING p99, the sample time)' },
  { file: 'redis-hostile.ts', title: 'sidekiq connection: a hostile Redis sampled (event-loop delay, RSS)' },
  { file: 'redis-jobs.ts', title: 'Redis job system (no-op jobs vs a bare ioredis loop)' },
  { file: 'history.ts', title: 'history (7-day range)' },
  { file: 'footprint.ts', title: 'footprint' },
  { file: 'ui.ts', title: 'UI' },
  { file: 'simulator.ts', title: 'runner simulator' },
];

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? '') : undefined;
}

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

/** The machine in a few words: CPU, cores, RAM, the disk under os.tmpdir() (where data dirs go), Node. */
function machine() {
  const tmp = os.tmpdir();
  const df = sh('df', ['-hT', tmp]).split('\n')[1]?.split(/\s+/) ?? [];
  const device = df[0] ?? '?';
  const rotational = sh('lsblk', ['-ndo', 'ROTA', device]).trim();
  const load = os.loadavg().map((x) => round(x, 1));
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    ram_gib: round(os.totalmem() / 2 ** 30, 1),
    disk: `${device} (${df[1] ?? '?'}, ${df[2] ?? '?'}${rotational === '0' ? ', SSD/virtual' : rotational === '1' ? ', rotational per lsblk' : ''}) at ${tmp}`,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    load_average_at_start: load,
  };
}

function markdown(results: BenchResult[], meta: { command: string; date: string; quick: boolean; machine: ReturnType<typeof machine>; seconds: number; failures: string[] }): string {
  const m = meta.machine;
  const rows = results.map((r) => {
    const extra = Object.entries(r)
      .filter(([k]) => !['name', 'value', 'unit', 'reference', 'ratio', 'goal', 'pass', 'spread'].includes(k))
      .map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
      .join(', ');
    const s = r.spread as Spread | undefined;
    const spread = s ? ` (${s.ratio[0]}–${s.ratio[1]}, ${s.rounds} rounds)` : '';
    return `| ${r.name} | ${r.value} ${r.unit} | ${r.reference} | ${r.ratio}×${spread} | ${r.goal} | ${r.pass ? 'pass' : '**miss**'} | ${extra} |`;
  });
  return [
    '# Benchmarks',
    '',
    `Latest run: ${meta.date}, made with \`${meta.command}\`${meta.quick ? ' (quick mode: smaller sizes, shorter runs)' : ''}, ${round(meta.seconds, 0)} s in all.`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.ram_gib} GiB RAM; disk ${m.disk}; ${m.os}; Node ${m.node}. ` +
      `Load average when the run began: ${m.load_average_at_start.join(' / ')} (other work on the machine makes every figure noisier).`,
    '',
    'How it runs: the server under test is `jobscope serve` in a child process (or, for the reference, a bare node:http server in a child process);',
    'the load generator runs in the bench process, so on two cores each side gets one. The benchmarks run one after another.',
    'The reference column is the bare baseline measured in the same run (a bare node:http server, a raw file copy, a plain JS loop…);',
    'ratio is figure ÷ reference (for latencies and sizes, lower is better); each line is the median of the rounds, with the min–max of their ratios.',
    '`npm run bench -- --compare` marks every line that moved beyond that spread against the committed `bench/results.json` (a move no larger than the last committed runs made between themselves on this machine: *within history*).',
    '',
    '| Benchmark | Figure | Reference | Ratio | Goal | Result | Details |',
    '|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...(meta.failures.length ? ['Benchmarks that failed to run:', '', ...meta.failures.map((f) => `- ${f}`), ''] : []),
    ...(fs.existsSync(path.join(REPO, 'docs/benchmarks/README.md')) ? ['Scale curves (`npm run bench -- --curves`): [docs/benchmarks/](benchmarks/README.md).', ''] : []),
    ...(fs.existsSync(path.join(REPO, 'docs/benchmark-bounds.md')) ? ['What bounds each line, with the profile that showed it: [benchmark-bounds.md](benchmark-bounds.md).', ''] : []),
    'Raw figures: `bench/results.json`. Profiles: `npm run bench -- --cpu-prof` writes the server children’s V8 CPU profiles to `.tmp/bench-profiles/`.',
    '',
  ].join('\n');
}

async function main() {
  const quick = process.argv.includes('--quick');
  const only = arg('--only')?.split(',').filter(Boolean);
  const against = arg('--against') || 'HEAD';
  const rounds = Math.max(1, Number(arg('--rounds') ?? (quick ? 2 : 3)) || 1);
  if (process.argv.includes('--compare-only')) {
    process.exit(gate(JSON.parse(fs.readFileSync(path.join(REPO, 'bench/results.json'), 'utf8')), against));
  }
  if (process.argv.includes('--cpu-prof')) process.env.JOBSCOPE_BENCH_CPU_PROF = path.join(REPO, '.tmp/bench-profiles');
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  if (process.argv.includes('--curves')) {
    await runCurves({ quick, only, command, replot: process.argv.includes('--replot') });
    process.exit(0);
  }
  const info = machine();
  const began = performance.now();
  const results: BenchResult[] = [];
  const failures: string[] = [];

  for (const b of BENCHES) {
    const name = b.file.replace(/\.ts$/, '');
    if (only && !only.includes(name)) continue;
    const file = path.join(REPO, 'bench', b.file);
    if (!fs.existsSync(file)) {
      console.log(`- ${b.title}: bench/${b.file} is not there yet, skipped`);
      continue;
    }
    const t0 = performance.now();
    console.log(`▶ ${b.title} (bench/${b.file})${quick ? ' --quick' : ''}`);
    try {
      const mod = (await import(pathToFileURL(file).href)) as { run(opts: { quick: boolean }): Promise<BenchResult | BenchResult[]> };
      const each: BenchResult[][] = [];
      for (let i = 0; i < rounds; i++) {
        let out: BenchResult | BenchResult[];
        try {
          out = await mod.run({ quick });
        } catch (err) {
          // A later round that fails leaves the rounds that ran: fewer rounds, a narrower spread, said so.
          if (i === 0) throw err;
          console.log(`  round ${i + 1} failed, kept ${i}: ${(err as Error).message.split('\n')[0]}`);
          break;
        }
        each.push(Array.isArray(out) ? out : [out]);
        if (rounds > 1) console.log(`  round ${i + 1} of ${rounds}: ${each[i]!.map((r) => `${r.ratio}×`).join(', ')}`);
        if (hasSpread(each[0]!)) break;
      }
      for (const r of mergeRounds(each)) {
        results.push(r);
        const s = r.spread as Spread | undefined;
        console.log(`  ${r.pass ? '✓' : '✗'} ${r.name}: ${r.value} ${r.unit} (reference ${r.reference}, ratio ${r.ratio}×${s ? ` [${s.ratio[0]}–${s.ratio[1]}]` : ''}; goal ${r.goal})`);
      }
    } catch (err) {
      const msg = `${b.title}: ${(err as Error).message.split('\n')[0]}`;
      failures.push(msg);
      console.log(`  ✗ failed: ${msg}`);
    }
    console.log(`  (${round((performance.now() - t0) / 1000, 1)} s)`);
  }

  const seconds = (performance.now() - began) / 1000;
  const date = new Date().toISOString();
  const file = { date, command, quick, rounds, seconds: round(seconds, 1), machine: info, results, failures };
  fs.writeFileSync(path.join(REPO, 'bench/results.json'), JSON.stringify(file, null, 2) + '\n');
  fs.mkdirSync(path.join(REPO, 'docs'), { recursive: true });
  fs.writeFileSync(path.join(REPO, 'docs/benchmarks.md'), markdown(results, { command, date, quick, machine: info, seconds, failures }));
  const missed = results.filter((r) => !r.pass);
  console.log(`\n${results.length - missed.length} of ${results.length} figures meet their goal${failures.length ? `, ${failures.length} benchmarks failed to run` : ''}; ${round(seconds, 0)} s. Wrote bench/results.json and docs/benchmarks.md.`);
  // Other files' benchmarks may leave handles open (browsers, timers): the run is over.
  process.exit(process.argv.includes('--compare') ? gate(file, against) : 0);
}

await main();
