// The dispatch line's closed loop (bench/dispatch.ts: 200 runners over N pending builds, until none is
// left) against one `jobscope serve` child under --trace-gc: the scavenges and other GC pauses the
// server printed while the loop ran, their time a build, beside the server's main-thread and process
// CPU a build. Run it against checkouts in turn (JOBSCOPE_BENCH_SERVER_ROOT=<checkout>) to see what a
// V8 flag or an allocation cut does to the GC a build hands out.
//   node --import tsx bench/experiments/dispatch-gc.ts [builds]
import http from 'node:http';
import os from 'node:os';
import { poll } from '../dispatch.ts';
import { createBuilds, project, registerRunner, round, startJobscope } from '../lib/harness.ts';

const RUNNERS = 200;
const total = Number(process.argv[2] ?? 10_000);
const TRACE = /\s[\d.]+ ms: (Scavenge|Mark-Compact|Mark-sweep|Minor Mark-Sweep)\S*[^,]*, ([\d.]+) \/ [\d.]+ ms/;

const s = await startJobscope('dispatch-gc', [], ['--trace-gc']);
const pauses: { kind: string; ms: number }[] = [];
let counting = false;
let partial = '';
s.proc.stdout!.on('data', (d: Buffer) => {
  const lines = (partial + d.toString()).split('\n');
  partial = lines.pop()!;
  for (const line of lines) {
    const m = TRACE.exec(line);
    if (m && counting) pauses.push({ kind: m[1]!, ms: Number(m[2]) });
  }
});
try {
  const p = await project(s, 'bench-dispatch-gc');
  await createBuilds(s, p.id, total);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const tokens: string[] = [];
  for (let i = 0; i < RUNNERS; i += 8) tokens.push(...(await Promise.all(Array.from({ length: Math.min(8, RUNNERS - i) }, (_, j) => registerRunner(s, `gc-${i + j}`, agent)))));
  agent.destroy();
  const bodies = tokens.map((token) => JSON.stringify({ token, info: { name: 'gitlab-ci-multi-runner', version: '1.11.5' } }));
  const load = os.loadavg()[0]!;
  counting = true;
  const r = await poll(`${s.url}/ci/api/v1/builds/register.json`, bodies, total, 120, s.pid);
  // The last lines of the loop's pauses may still be in the pipe.
  await new Promise((resolve) => setTimeout(resolve, 200));
  counting = false;
  const scavenges = pauses.filter((x) => x.kind === 'Scavenge');
  const ms = (xs: typeof pauses) => xs.reduce((t, x) => t + x.ms, 0);
  console.log(
    JSON.stringify({
      root: process.env.JOBSCOPE_BENCH_SERVER_ROOT ?? 'this checkout',
      load: round(load, 1),
      builds: r.handedOut,
      buildsPerSec: round(r.buildsPerSec, 0),
      mainCpuMsPerBuild: round(r.mainCpuMsPerBuild, 3),
      cpuMsPerBuild: round(r.cpuMsPerBuild, 3),
      scavenges: scavenges.length,
      scavengeMsPerBuild: round(ms(scavenges) / r.handedOut, 3),
      otherPauses: pauses.length - scavenges.length,
      otherPauseMs: round(ms(pauses) - ms(scavenges), 1),
    }),
  );
} finally {
  await s.stop();
}
