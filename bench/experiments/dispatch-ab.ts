// A/B of the dispatch benchmark between checkouts' servers: this checkout's client and bare
// reference (bench/reference/dispatch-server.ts, run the same way for both) against each side's
// `bin/jobscope.js`, in alternating rounds (ABBA, so load drift hits both alike). Each figure is a
// ratio to the reference measured right after it in the same round, and so is the server CPU per
// build; the summary gives median and min–max per side, with the load average seen at each round's start.
//   node --import tsx bench/experiments/dispatch-ab.ts <rounds> <label>=<checkout> <label>=<checkout>... [--quick]
import os from 'node:os';
import { log, round } from '../lib/harness.ts';
import { run } from '../dispatch.ts';

interface Row {
  side: string;
  round: number;
  load: number;
  buildsPerSec: number;
  reference: number;
  ratio: number;
  pacedP99: number;
  pacedReferenceP99: number;
  pacedRatio: number;
  cpuMsPerBuild: number;
  cpuRatio: number;
  /** The server's main thread alone, and over the bare durable take's main thread (the line's reference). */
  mainCpuMsPerBuild: number;
  mainCpuRatioToDurable: number;
}

const args = process.argv.slice(2).filter((a) => a !== '--quick');
const quick = process.argv.includes('--quick');
const rounds = Number(args[0]);
const sides = args.slice(1).map((a) => {
  const i = a.indexOf('=');
  return { label: a.slice(0, i), root: a.slice(i + 1) };
});
if (!(rounds > 0) || sides.length < 2 || sides.some((s) => !s.label || !s.root)) {
  console.error('usage: dispatch-ab.ts <rounds> <label>=<checkout> <label>=<checkout>... [--quick]');
  process.exit(2);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const rows: Row[] = [];
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? sides : [...sides].reverse();
  for (const side of order) {
    process.env.JOBSCOPE_BENCH_SERVER_ROOT = side.root;
    const load = os.loadavg()[0]!;
    const [closed, paced] = await run({ quick });
    const row: Row = {
      side: side.label,
      round: r + 1,
      load: round(load, 2),
      buildsPerSec: closed!.value,
      reference: closed!.reference,
      ratio: closed!.ratio,
      pacedP99: paced!.value,
      pacedReferenceP99: paced!.reference,
      pacedRatio: paced!.ratio,
      cpuMsPerBuild: closed!.cpu_ms_per_build as number,
      cpuRatio: round((closed!.cpu_ms_per_build as number) / (closed!.reference_cpu_ms_per_build as number)),
      mainCpuMsPerBuild: closed!.main_thread_cpu_ms_per_build as number,
      mainCpuRatioToDurable: round((closed!.main_thread_cpu_ms_per_build as number) / (closed!.bare_durable_main_thread_cpu_ms_per_build as number)),
    };
    rows.push(row);
    log(`ab round ${row.round} ${row.side}: ${row.buildsPerSec} builds/s vs ${row.reference} (${row.ratio}x); paced p99 ${row.pacedP99} vs ${row.pacedReferenceP99} ms (${row.pacedRatio}x); server CPU ${row.cpuMsPerBuild} ms/build (${row.cpuRatio}x the reference's), main thread ${row.mainCpuMsPerBuild} (${row.mainCpuRatioToDurable}x the bare durable take's); load ${row.load}`);
  }
}

const summary = sides.map(({ label }) => {
  const mine = rows.filter((x) => x.side === label);
  const stat = (k: keyof Row) => {
    const xs = mine.map((x) => x[k] as number);
    return { median: round(median(xs)), min: round(Math.min(...xs)), max: round(Math.max(...xs)) };
  };
  return { side: label, rounds: mine.length, ratio: stat('ratio'), buildsPerSec: stat('buildsPerSec'), pacedRatio: stat('pacedRatio'), pacedP99: stat('pacedP99'), cpuMsPerBuild: stat('cpuMsPerBuild'), cpuRatio: stat('cpuRatio'), mainCpuMsPerBuild: stat('mainCpuMsPerBuild'), mainCpuRatioToDurable: stat('mainCpuRatioToDurable'), load: stat('load') };
});
console.log(JSON.stringify({ rows, summary }, null, 2));
