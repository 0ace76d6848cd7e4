// A/B of the trace-append benchmark between checkouts' servers, as bench/experiments/dispatch-ab.ts does for
// dispatch: this checkout's client and bare reference against each side's `bin/jobscope.js`, in
// alternating rounds (ABBA). Each figure is a ratio to the reference measured in the same round;
// the server CPU per part of both is given too, since on a loaded machine it moves less than a rate.
//   node --import tsx bench/experiments/traces-ab.ts <rounds> <label>=<checkout> <label>=<checkout>... [--streams N] [--seconds S] [--inner N]
import os from 'node:os';
import { log, round } from '../lib/harness.ts';
import { measure } from '../traces.ts';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv.splice(i, 2)[1]) : dflt;
};
const streams = opt('--streams', 32);
const seconds = opt('--seconds', 4);
// Rounds per server start, the best one kept: a fresh server's first seconds run with a small young
// generation (the launcher's V8 tuning) and a cold JIT, which one round alone would measure.
const inner = opt('--inner', 2);
const rounds = Number(argv[0]);
const sides = argv.slice(1).map((a) => ({ label: a.slice(0, a.indexOf('=')), root: a.slice(a.indexOf('=') + 1) }));
if (!(rounds > 0) || sides.length < 2 || sides.some((s) => !s.label || !s.root)) {
  console.error('usage: traces-ab.ts <rounds> <label>=<checkout> <label>=<checkout>... [--streams N] [--seconds S] [--inner N]');
  process.exit(2);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const rows: { side: string; round: number; load: number; ratio: number; p99: number; refP99: number; cpu: number; refCpu: number; cpuRatio: number }[] = [];
for (let r = 0; r < rounds; r++) {
  for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
    process.env.JOBSCOPE_BENCH_SERVER_ROOT = side.root;
    const load = round(os.loadavg()[0]!, 2);
    const { ours, bare } = await measure(streams, seconds, inner, false);
    const row = {
      side: side.label,
      round: r + 1,
      load,
      ratio: round(ours.partsPerSec / bare.partsPerSec),
      p99: round(ours.p99),
      refP99: round(bare.p99),
      cpu: round(ours.cpuMsPerPart, 3),
      refCpu: round(bare.cpuMsPerPart, 3),
      cpuRatio: round(ours.cpuMsPerPart / bare.cpuMsPerPart),
    };
    rows.push(row);
    log(`ab round ${row.round} ${row.side}: ${row.ratio}x parts/s; p99 ${row.p99} vs ${row.refP99} ms; CPU ${row.cpu} vs ${row.refCpu} ms/part (${row.cpuRatio}x); load ${load}`);
  }
}
const summary = sides.map(({ label }) => {
  const mine = rows.filter((x) => x.side === label);
  const stat = (k: 'ratio' | 'p99' | 'cpu' | 'cpuRatio' | 'load') => {
    const xs = mine.map((x) => x[k]);
    return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
  };
  return { side: label, rounds: mine.length, streams, ratio: stat('ratio'), cpuRatio: stat('cpuRatio'), cpuMsPerPart: stat('cpu'), p99: stat('p99'), load: stat('load') };
});
console.log(JSON.stringify({ rows, summary }, null, 2));
