// Benchmark: the dashboard's history query — 7 days of 5 s samples of 50 queues (120,960 samples),
// downsampled server-side to ≤ 1,000 points — over real HTTP against a real server whose history was
// seeded through the monitor's own recording path (one transaction per simulated hour: the fast path).
// The reference, measured in the same run: a bare JS loop averaging the same raw data, held in one
// Float64Array, into 1,000 buckets for every series. Goal: p99 < 50 ms. `days` sets the range for the scale
// curve (bench/curves.ts).
//   node --import tsx bench/history.ts [--quick]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildServer } from '../server/app.ts';
import { resolveConfig } from '../server/config.ts';
import type { Monitor } from '../server/monitor/monitor.ts';
import type { CompoundMetrics } from '../contract/metrics.ts';
import type { History } from '../contract/app.ts';
import { percentile, round as roundTo, type BenchResult } from './lib/harness.ts';
import { seededRandom } from '../common/prng.ts';
import { databaseOf } from '../server/store/index.ts';

/** The harness's nearest-rank percentile over a copy sorted here. */
const pct = (xs: number[], p: number) => percentile([...xs].sort((a, b) => a - b), p);
const round = (x: number) => roundTo(x, 3);

const GOAL_P99_MS = 50;
const DAYS = 7;
const STEP_MS = 5000;
const QUEUES = 50;
const POINTS = 1000;

export type { BenchResult };


export async function run({ quick = false, days = DAYS, repeats = quick ? 100 : 300 }: { quick?: boolean; days?: number; repeats?: number } = {}): Promise<BenchResult> {
  const warmup = 20; // JIT and connection warm-up, not measured
  const log = (m: string) => process.stderr.write(`[history] ${m}\n`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-history-'));
  // Past the 7 days kept by default the oldest samples would be dropped: the range is kept whole.
  const server = await buildServer(resolveConfig({ port: 0, dataDir, logLevel: 'silent', monitorIntervalMs: 3_600_000, historyDays: Math.max(7, days) }, {}));
  try {
    const url = await server.listen();
    const monitor = server.ctx.services.get<Monitor>('monitor')!;
    const c = monitor.connections.create({ name: 'bench', baseUrl: 'http://127.0.0.1:9', token: 'x', apiVersion: 'v4', segment: 'sidekiq', intervalS: 5, enabled: false });
    const n = (days * 86_400_000) / STEP_MS;
    const end = Math.floor(Date.now() / STEP_MS) * STEP_MS;
    const start = end - (n - 1) * STEP_MS;
    const names = Array.from({ length: QUEUES }, (_, q) => `queue_${String(q).padStart(2, '0')}`);
    const random = seededRandom(42);
    // The same samples, kept raw for the reference: [backlog, latency] per queue per sample.
    const raw = new Float64Array(n * QUEUES * 2);
    log(`seeding ${n.toLocaleString('en')} samples × ${QUEUES} queues through the monitor…`);
    const seedStarted = performance.now();
    const perTx = 720; // one simulated hour per transaction
    let processed = 0;
    for (let i0 = 0; i0 < n; i0 += perTx) {
      databaseOf(server.ctx.store).tx(() => {
        for (let i = i0; i < Math.min(n, i0 + perTx); i++) {
          const queues: CompoundMetrics['queues'] = {};
          for (let q = 0; q < QUEUES; q++) {
            const wave = Math.sin((i / 720) * (1 + (q % 5)) + q) * 0.5 + 0.5;
            const backlog = Math.round(wave * (q + 1) * 20 + random() * 10);
            const latency = Math.round(backlog / 10 + random() * 3);
            queues[names[q]!] = { backlog, latency };
            raw[(i * QUEUES + q) * 2] = backlog;
            raw[(i * QUEUES + q) * 2 + 1] = latency;
          }
          processed += 10 + Math.floor(random() * 20);
          monitor.record(c, start + i * STEP_MS, { queues, processes: [], jobs: { processed, failed: Math.floor(processed / 50), enqueued: 0 } }, '');
        }
      });
      if ((i0 / perTx) % 24 === 0) log(`  day ${i0 / perTx / 24 + 1} of ${days}…`);
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    log(`seeded in ${seedSeconds.toFixed(1)} s; querying ${repeats}× over HTTP…`);

    const q = `${url}/api/app/connections/${c.id}/history?from=${start}&to=${end}&points=${POINTS}`;
    const headers = { 'private-token': server.ctx.store.adminToken };
    let answer: History | undefined;
    const ours: number[] = [];
    const inProcess: number[] = [];
    for (let r = 0; r < repeats + warmup; r++) {
      const t0 = performance.now();
      const res = await fetch(q, { headers });
      answer = (await res.json()) as History;
      if (r >= warmup) ours.push(performance.now() - t0);
      const t1 = performance.now();
      monitor.history(c, { from: start, to: end, points: POINTS, top: 8 });
      if (r >= warmup) inProcess.push(performance.now() - t1);
    }
    if (!answer || answer.t.length > POINTS || answer.t.length < POINTS / 2 || Object.keys(answer.queues).length !== 8) {
      throw new Error(`unexpected answer: ${answer?.t.length} buckets, ${Object.keys(answer?.queues ?? {}).length} queues`);
    }

    log('reference: a bare loop over the raw Float64Array…');
    const bare: number[] = [];
    let checksum = 0;
    for (let r = 0; r < repeats + warmup; r++) {
      const t0 = performance.now();
      const span = end - start;
      const step = Math.ceil(span / (POINTS - 1));
      const b0 = Math.floor(start / step);
      const nb = Math.floor(end / step) - b0 + 1;
      const sums = new Float64Array(nb * QUEUES * 2);
      const counts = new Float64Array(nb);
      for (let i = 0; i < n; i++) {
        const b = Math.floor((start + i * STEP_MS) / step) - b0;
        counts[b]!++;
        const o = i * QUEUES * 2;
        const ob = b * QUEUES * 2;
        for (let k = 0; k < QUEUES * 2; k++) sums[ob + k]! += raw[o + k]!;
      }
      for (let b = 0; b < nb; b++) for (let k = 0; k < QUEUES * 2; k++) sums[b * QUEUES * 2 + k]! /= counts[b] || 1;
      checksum += sums[0]!;
      if (r >= warmup) bare.push(performance.now() - t0);
    }

    const p50 = pct(ours, 50);
    const p99 = pct(ours, 99);
    const r50 = pct(bare, 50);
    const r99 = pct(bare, 99);
    return {
      name: `history: ${days} d of 5 s samples × 50 queues, downsampled to ≤ 1,000 points, p99 over HTTP`,
      value: round(p99),
      unit: 'ms',
      reference: round(r99),
      ratio: round(p99 / r99),
      goal: `p99 < ${GOAL_P99_MS} ms`,
      pass: p99 < GOAL_P99_MS,
      p50_ms: round(p50),
      in_process_p50_ms: round(pct(inProcess, 50)),
      in_process_p99_ms: round(pct(inProcess, 99)),
      reference_p50_ms: round(r50),
      ratio_note: 'ratio = our p99 (HTTP, JSON, top-8 of 50 queues) / a bare loop averaging all 100 raw series into the same buckets (lower is better)',
      samples: n,
      buckets: answer.t.length,
      answer_bytes: JSON.stringify(answer).length,
      seed_seconds: round(seedSeconds),
      repeats,
      checksum: round(checksum),
    };
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await run({ quick: process.argv.includes('--quick') });
  process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
}
