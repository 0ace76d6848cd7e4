// What the slow polls of the paced dispatch phase (bench/dispatch.ts) have in common with the
// server's GC pauses: a `jobscope serve` child under --trace-gc, the bench's paced polling (200
// runners, each every 200 ms), and each poll above the p99 lined up with the pauses the server
// printed. A trace line's time is the server's own (ms since its isolate started); it is put on this
// process's clock by the smallest gap seen between a line's arrival and its time (a line cannot
// arrive before it is printed). Prints the share of slow polls and of all polls that overlap a
// pause, and the slowest polls with the pauses under them.
// `warm` seconds of the same polling come first (the bench's paced phase starts ~5–8 s after the
// server's start, inside hosts/v8-flags.js' START_UP_MS, while the young generation is held small).
//   node --import tsx bench/experiments/dispatch-tail.ts [seconds] [warm]
import http from 'node:http';
import os from 'node:os';
import { paced } from '../dispatch.ts';
import { createBuilds, project, registerRunner, round, startJobscope } from '../lib/harness.ts';

const RUNNERS = 200;
const EVERY_MS = 200;
const seconds = Number(process.argv[2] ?? 6);
const warm = Number(process.argv[3] ?? 3);

interface Pause {
  kind: string;
  /** End of the pause on the server's clock (ms since its isolate started), and its length. */
  at: number;
  ms: number;
  /** performance.now() here when its line arrived. */
  arrived: number;
}

const TRACE = /\s([\d.]+) ms: (Scavenge|Mark-Compact|Mark-sweep|Minor Mark-Sweep)\S*[^,]*, ([\d.]+) \/ ([\d.]+) ms/;

const pauses: Pause[] = [];
const startedAt = performance.now();
const s = await startJobscope('dispatch-tail', [], ['--trace-gc']);
let partial = '';
s.proc.stdout!.on('data', (d: Buffer) => {
  const arrived = performance.now();
  const lines = (partial + d.toString()).split('\n');
  partial = lines.pop()!;
  for (const line of lines) {
    const m = TRACE.exec(line);
    if (m) pauses.push({ kind: m[2]!, at: Number(m[1]), ms: Number(m[3]), arrived });
  }
});
try {
  const p = await project(s, 'bench-dispatch-tail');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const tokens: string[] = [];
  for (let i = 0; i < RUNNERS; i += 8) tokens.push(...(await Promise.all(Array.from({ length: Math.min(8, RUNNERS - i) }, (_, j) => registerRunner(s, `tail-${i + j}`, agent)))));
  agent.destroy();
  const bodies = tokens.map((token) => JSON.stringify({ token, info: { name: 'gitlab-ci-multi-runner', version: '1.11.5' } }));
  const url = `${s.url}/ci/api/v1/builds/register.json`;
  const perRun = (secs: number) => Math.ceil((RUNNERS * secs * 1000) / EVERY_MS);
  await createBuilds(s, p.id, perRun(warm));
  await paced(url, bodies, EVERY_MS, warm);
  await createBuilds(s, p.id, perRun(seconds));
  const from = pauses.length;
  const load = os.loadavg()[0]!;
  const measuredFrom = performance.now();
  const r = await paced(url, bodies, EVERY_MS, seconds);
  // Server clock → this clock: the smallest (arrival − printed time) over every line.
  const offset = Math.min(...pauses.map((x) => x.arrived - x.at));
  const window = pauses.slice(Math.max(0, from - 5)).map((x) => ({ ...x, end: x.at + offset, start: x.at + offset - x.ms }));
  const under = (i: number) => {
    const a = r.sentAt[i]!;
    const b = a + r.latencies[i]!;
    return window.filter((x) => x.start < b && x.end > a);
  };
  const order = r.latencies.map((_, i) => i).sort((a, b) => r.latencies[b]! - r.latencies[a]!);
  const slow = order.slice(0, Math.max(1, Math.ceil(order.length / 100)));
  const share = (idx: number[]) => round((100 * idx.filter((i) => under(i).length > 0).length) / idx.length, 1);
  const inWindow = window.filter((x) => x.end >= r.sentAt[0]!);
  console.log(`load ${round(load, 1)}; measured from ${round((measuredFrom - startedAt) / 1000, 1)} s after the server's start; ${r.latencies.length} polls in ${seconds} s, p50 ${round(r.p50)} ms, p99 ${round(r.p99)} ms, max ${round(r.max)} ms`);
  console.log(`GC pauses in the window: ${inWindow.length} (${inWindow.filter((x) => x.kind === 'Scavenge').length} scavenges), ${round(inWindow.reduce((t, x) => t + x.ms, 0))} ms in all, longest ${round(Math.max(0, ...inWindow.map((x) => x.ms)))} ms`);
  console.log(`polls overlapping a GC pause: slowest 1 % ${share(slow)} %, all ${share(order)} %`);
  for (const i of slow.slice(0, 12)) {
    const gcs = under(i);
    console.log(`  ${round(r.latencies[i]!)} ms at +${round(r.sentAt[i]! - r.sentAt[0]!, 0)} ms: ${gcs.length ? gcs.map((x) => `${x.kind} ${x.ms} ms`).join(', ') : 'no GC pause'}`);
  }
} finally {
  await s.stop();
}
