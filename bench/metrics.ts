// Benchmark: one compound_metrics call with 1,000 queues and 500 worker processes, over real HTTP,
// against a `jobscope serve` child process running the demo load at that size. The reference is a
// bare node:http server (also a child process) answering the same pre-serialised JSON, measured in
// the same run with the same client: the ratio is what our routing, auth, snapshot and
// serialisation cost on top of the bare minimum. Goal: p99 <= 1.5x the bare server's. `queues` sets the count for the scale
// curve (bench/curves.ts): the demo load has at most 2,000 queues, so past that the rest are synthetic
// queues holding one waiting job each (enqueued through the control API).
//   node --import tsx bench/metrics.ts [--quick]
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cpuProfArgs, percentile, round as roundTo, type BenchResult } from './lib/harness.ts';

/** The harness's nearest-rank percentile over a copy sorted here. */
const pct = (xs: number[], p: number) => percentile([...xs].sort((a, b) => a - b), p);
const round = (x: number) => roundTo(x, 3);

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TOKEN = 'bench-metrics-admin-token';
const GOAL_RATIO = 1.5;

export type { BenchResult };

function startChild(args: string[], ready: RegExp): Promise<{ proc: ChildProcess; url: string }> {
  // --cpu-prof (bench/run.ts) profiles the server child; SIGTERM at the end lets it write the profile.
  const proc = spawn(process.execPath, [...cpuProfArgs('metrics'), ...args], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`child did not start: ${err}`)), 30_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: m[1]! });
      }
    });
    proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    proc.on('exit', (code) => reject(new Error(`child exited ${code}: ${err}`)));
  });
}

function stop(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (proc.exitCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

function put(url: string, json: unknown, method = 'PUT'): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(json);
    const req = http.request(url, { method, agent, headers: { 'content-type': 'application/json', 'private-token': TOKEN, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const post = (url: string, json: unknown) => put(url, json, 'POST');

/** Sequential requests on one keep-alive connection; returns sorted latencies in ms. */
async function measure(url: string, headers: Record<string, string>, n: number, warmup: number): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await get(url, headers);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await get(url, headers);
    times.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
  }
  return times.sort((a, b) => a - b);
}

// The bare reference: a node:http server that answers every request with the same bytes.
const REFERENCE_SERVER = `
const http = require('node:http');
let body = Buffer.alloc(0);
process.stdin.on('data', (c) => (body = Buffer.concat([body, c])));
process.stdin.on('end', () => {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
  server.keepAliveTimeout = 60000;
  server.listen(0, '127.0.0.1', () => console.log('reference listening on http://127.0.0.1:' + server.address().port));
});
`;

const DEMO_MAX_QUEUES = 2000;

export async function run({ quick = false, queues: wanted = 1000, calls }: { quick?: boolean; queues?: number; calls?: number } = {}): Promise<BenchResult> {
  const n = calls ?? (quick ? 400 : 3000);
  const warmup = Math.min(quick ? 100 : 300, n);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-bench-metrics-'));
  const log = (m: string) => process.stderr.write(`[metrics] ${m}\n`);
  let server: ChildProcess | undefined;
  let reference: ChildProcess | undefined;
  try {
    log('starting jobscope serve (child process)…');
    const s = await startChild(
      // --max-queues (1,000 by default) bounds the synthetic queues past the demo's.
      ['--import', 'tsx', 'hosts/cli.ts', 'serve', '--port', '0', '--data-dir', dataDir, '--admin-token', TOKEN, '--log-level', 'silent', '--max-queues', String(Math.max(1000, wanted))],
      /Jobscope listening on (http:\/\/\S+)/,
    );
    server = s.proc;
    // A living system of that size: 500 simulated processes over 1,000 queues, jobs flowing.
    const status = await put(`${s.url}/api/v3/sim/load`, {
      processes: 500, concurrency: 5, queues: Math.min(wanted, DEMO_MAX_QUEUES), rate: 300, wave: 0.5, period_s: 30, duration_ms: 2000, failure_rate: 0.02, burst_every_s: 5, burst_size: 500, seed: 1,
    });
    if (status !== 200) throw new Error(`PUT /api/v3/sim/load answered ${status}`);
    for (let q = DEMO_MAX_QUEUES; q < wanted; q++) {
      const code = await post(`${s.url}/api/v3/sim/jobs`, { queue: `bench_extra_${q}`, count: 1 });
      if (code !== 202) throw new Error(`POST /api/v3/sim/jobs answered ${code}`);
    }
    await new Promise((r) => setTimeout(r, 2000));
    const url = `${s.url}/api/v4/sidekiq/compound_metrics`;
    const headers = { 'private-token': TOKEN };
    const sample = await get(url, headers);
    const parsed = JSON.parse(sample.body.toString()) as { queues: Record<string, unknown>; processes: unknown[]; jobs: { processed: number } };
    const queues = Object.keys(parsed.queues).length;
    const processes = parsed.processes.length;
    if (queues < wanted || processes < 500) throw new Error(`expected ≥${wanted} queues and ≥500 processes, got ${queues} and ${processes}`);
    log(`${queues} queues, ${processes} processes, ${sample.body.length} bytes per answer; ${n} calls…`);
    const ours = await measure(url, headers, n, warmup);
    await stop(server);
    server = undefined;

    log('starting the bare node:http reference (child process)…');
    const ref = spawn(process.execPath, ['-e', REFERENCE_SERVER], { stdio: ['pipe', 'pipe', 'pipe'] });
    reference = ref;
    const refUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      ref.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      ref.on('exit', (code) => reject(new Error(`reference exited ${code}`)));
      ref.stdin!.end(sample.body);
    });
    const bare = await measure(refUrl, {}, n, warmup);

    const p50 = pct(ours, 50);
    const p99 = pct(ours, 99);
    const r50 = pct(bare, 50);
    const r99 = pct(bare, 99);
    return {
      name: `metrics: compound_metrics p99, ${wanted.toLocaleString('en')} queues × 500 processes`,
      value: round(p99),
      unit: 'ms',
      reference: round(r99),
      ratio: round(p99 / r99),
      goal: `p99 <= ${GOAL_RATIO}x bare`,
      pass: p99 / r99 <= GOAL_RATIO,
      p50_ms: round(p50),
      reference_p50_ms: round(r50),
      ratio_note: 'ratio = our p99 / bare node:http p99 serving the same bytes (lower is better)',
      calls: n,
      bytes: sample.body.length,
      queues,
      processes,
    };
  } finally {
    if (server) await stop(server);
    if (reference) await stop(reference);
    agent.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await run({ quick: process.argv.includes('--quick') });
  process.stdout.write(
    `${r.name}\n  jobscope: p50 ${r.p50_ms} ms, p99 ${r.value} ms (${r.bytes} bytes, ${r.queues} queues, ${r.processes} processes, ${r.calls} calls)\n` +
      `  bare node:http, same bytes: p50 ${r.reference_p50_ms} ms, p99 ${r.reference} ms\n  ratio (p99): ${r.ratio}×   goal ${r.goal}: ${r.pass ? 'PASS' : 'FAIL'}\n`,
  );
}
