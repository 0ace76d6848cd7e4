// Probe, not a benchmark (nothing is judged): whose CPU the simulator line's gap is. The bench runs
// the server inside its own process, so its figure is one CPU total for server and client together.
// Here the server is a `jobscope serve` child: each side of bench/simulator.ts (the simulator, its
// bare loop) in alternating pairs, 400 builds after 400 warm, with the CPU a build of the server
// (the child, from /proc), of this process's main thread, and of its other threads (V8's compiler
// and GC helpers, libuv's pool). Linux only (/proc).
//   node --import tsx bench/experiments/simulator-split.ts [--pairs N]
import fs from 'node:fs';
import { cpuMeter, statCpuMs } from '../lib/pg-bench.ts';
import { child, referenceRun, simulatorRun, type Shape } from '../simulator.ts';

const SHAPE: Shape = { runners: 20, builds: 400, traceKb: 16, partKb: 4, artifactKb: 64 };
const at = process.argv.indexOf('--pairs');
const PAIRS = at > 0 ? Number(process.argv[at + 1]) : 3;

/** This process's CPU so far: its main thread, and every other thread alive. */
function ownThreads(): { main: number; other: number } {
  let other = 0;
  for (const t of fs.readdirSync('/proc/self/task')) {
    if (t === String(process.pid)) continue;
    other += statCpuMs(`/proc/self/task/${t}/stat`); // 0 for a thread that ended while we looked
  }
  return { main: statCpuMs(`/proc/self/task/${process.pid}/stat`), other };
}

async function measure(side: 'simulator' | 'loop') {
  const run = side === 'simulator' ? simulatorRun : referenceRun;
  // The server's CPU is read from when the run has started it to when it stops it: the run's own
  // timing covers the builds only, so the server's figure includes its set-up (a few ms).
  let serverMs = 0;
  const own0 = ownThreads();
  const r = await run(SHAPE, async () => {
    const h = await child();
    const server = cpuMeter([h.pid!]);
    return { ...h, stop: () => ((serverMs = server().servers), h.stop()) };
  });
  const own1 = ownThreads();
  const per = (ms: number) => (ms / r.builds).toFixed(2);
  console.log(
    `${side.padEnd(9)} ${r.seconds.toFixed(2)} s for ${r.builds} builds; CPU a build: server ${per(serverMs)} ms, this process ${per(r.cpuMs)} ms over the builds; over the whole run (set-up included) its main thread ${per(own1.main - own0.main)}, its other threads ${per(own1.other - own0.other)}`,
  );
}

await simulatorRun(SHAPE, child);
await referenceRun(SHAPE, child);
for (let i = 0; i < PAIRS; i++) for (const side of i % 2 ? (['loop', 'simulator'] as const) : (['simulator', 'loop'] as const)) await measure(side);
process.exit(0);
