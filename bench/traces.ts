// Benchmark: trace appends. 32 concurrent streams of 4 KiB parts (PATCH trace.txt, each stream
// waiting for its 202 before the next part, as a runner does) against a `jobscope serve` child and,
// in alternating rounds, the same client against the bare reference (bench/reference/trace-server.ts).
// Goal: ≥ 0.8× the reference's parts/s, p99 < 10 ms. `streams` sets the count for the scale curve
// (bench/curves.ts).
//   node --import tsx bench/traces.ts [--quick]
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createBuilds, latencyStats, log, project, registerRunner, round, send, sendJson, startJobscope, startReference, RUNNER_UA, type BenchResult } from './lib/harness.ts';

const STREAMS = 32;
const PART = 4096;

interface Target {
  url: (id: number) => string;
  headers: (id: number) => Record<string, string>;
  ids: number[];
}

/** Every stream sends parts back to back for `seconds`; returns parts/s and latencies. */
async function drive(t: Target, seconds: number, offsets: Map<number, number>) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: t.ids.length });
  const part = Buffer.alloc(PART, 'x');
  const latencies: number[] = [];
  for (const id of t.ids) if (!offsets.has(id)) offsets.set(id, 0);
  let parts = 0;
  // A short warm-up (JIT, statement caches, file handles, connections), not counted.
  const warmUntil = performance.now() + 300;
  let until = Infinity;
  const stream = async (id: number) => {
    while (performance.now() < until) {
      const start = offsets.get(id)!;
      const t0 = performance.now();
      const r = await send(t.url(id), { method: 'PATCH', agent, body: part, headers: { 'content-type': 'text/plain', 'content-range': `${start}-${start + PART}`, ...t.headers(id) } });
      const dt = performance.now() - t0;
      if (r.status !== 202) throw new Error(`PATCH ${t.url(id)}: ${r.status} ${r.body.toString()}`);
      offsets.set(id, start + PART);
      if (t0 >= warmUntil) {
        latencies.push(dt);
        parts++;
      }
    }
  };
  const began = performance.now();
  until = began + 300 + seconds * 1000;
  await Promise.all(t.ids.map(stream));
  const elapsed = (performance.now() - warmUntil) / 1000;
  agent.destroy();
  return { partsPerSec: parts / elapsed, ...latencyStats(latencies) };
}

export async function run({ quick = false, streams = STREAMS, seconds = quick ? 1.5 : 4, rounds = quick ? 2 : 3 }: { quick?: boolean; streams?: number; seconds?: number; rounds?: number } = {}): Promise<BenchResult[]> {
  log(`traces: ${streams} streams × ${PART} B parts, ${rounds} rounds of ${seconds} s each on jobscope and on the bare reference, alternating`);

  // Both servers up at once and measured in turns, best round of each: on a shared machine the load
  // of others drifts, and alternating keeps that drift out of the ratio.
  const s = await startJobscope('traces');
  const refDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-traces-ref-'));
  const ref = await startReference('trace-server.ts', [refDir]);
  type Run = Awaited<ReturnType<typeof drive>>;
  let ours: Run | undefined;
  let bare: Run | undefined;
  try {
    const p = await project(s, 'bench-traces');
    await createBuilds(s, p.id, streams);
    const runner = await registerRunner(s, 'bench-traces');
    const tokens = new Map<number, string>();
    for (let i = 0; i < streams; i++) {
      const r = await sendJson<{ id: number; token: string }>(`${s.url}/ci/api/v1/builds/register.json`, 'POST', { token: runner });
      tokens.set(r.body.id, r.body.token);
    }
    const oursTarget: Target = { ids: [...tokens.keys()], url: (id) => `${s.url}/ci/api/v1/builds/${id}/trace.txt`, headers: (id) => ({ 'build-token': tokens.get(id)!, 'user-agent': RUNNER_UA }) };
    const bareTarget: Target = { ids: Array.from({ length: streams }, (_, i) => i + 1), url: (id) => `${ref.url}/builds/${id}/trace.txt`, headers: () => ({}) };
    const offsets = { ours: new Map<number, number>(), bare: new Map<number, number>() };
    for (let i = 0; i < rounds; i++) {
      const o = await drive(oursTarget, seconds, offsets.ours);
      const b = await drive(bareTarget, seconds, offsets.bare);
      log(`traces: round ${i + 1}: jobscope ${round(o.partsPerSec, 0)} parts/s (p99 ${round(o.p99)} ms), reference ${round(b.partsPerSec, 0)} parts/s (p99 ${round(b.p99)} ms)`);
      if (!ours || o.partsPerSec > ours.partsPerSec) ours = o;
      if (!bare || b.partsPerSec > bare.partsPerSec) bare = b;
    }
    // The bytes really are there.
    const id = [...tokens.keys()][0]!;
    const r = await send(`${s.url}/api/v3/sim/builds/${id}`, { headers: { 'private-token': s.adminToken } });
    if (JSON.parse(r.body.toString()).trace_length !== offsets.ours.get(id)) throw new Error('trace length differs from what was acknowledged');
  } finally {
    await s.stop();
    await ref.stop();
    fs.rmSync(refDir, { recursive: true, force: true });
  }
  if (!ours || !bare) throw new Error('no round ran');

  const ratio = ours.partsPerSec / bare.partsPerSec;
  log(`traces: jobscope ${round(ours.partsPerSec, 0)} parts/s p50 ${round(ours.p50)} ms p99 ${round(ours.p99)} ms; reference ${round(bare.partsPerSec, 0)} parts/s p99 ${round(bare.p99)} ms; ratio ${round(ratio)}`);
  return [
    {
      name: `trace appends (${streams} streams × 4 KiB)`,
      value: round(ours.partsPerSec, 0),
      unit: 'parts/s',
      reference: round(bare.partsPerSec, 0),
      ratio: round(ratio),
      goal: '≥ 0.8× reference',
      pass: ratio >= 0.8,
      p50_ms: round(ours.p50),
      p99_ms: round(ours.p99),
      reference_p99_ms: round(bare.p99),
    },
    {
      name: 'trace append latency p99',
      value: round(ours.p99),
      unit: 'ms',
      reference: round(bare.p99),
      ratio: round(ours.p99 / bare.p99),
      goal: 'p99 < 10 ms',
      pass: ours.p99 < 10,
      p50_ms: round(ours.p50),
    },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(JSON.stringify(await run({ quick: process.argv.includes('--quick') }), null, 2));
}
