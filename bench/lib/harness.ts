// What every benchmark of bench/ shares: the result shape, a server (or a bare reference) run as a
// child process so the load generator in this process gets the other core, RSS sampling from
// /proc, percentiles, and keep-alive HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const RUNNER_UA = 'gitlab-ci-multi-runner 1.11.5 (1-11-stable; go1.19.8; linux/amd64)';

export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  reference: number;
  ratio: number;
  goal: string;
  pass: boolean;
  [extra: string]: unknown;
}

export interface Child {
  url: string;
  pid: number;
  proc: ChildProcess;
  /** Stops it with SIGTERM (so a --cpu-prof profile is written) and waits. */
  stop(): Promise<void>;
}

/** Where `--cpu-prof` profiles of server children go (set by bench/run.ts). */
export function cpuProfArgs(tag: string): string[] {
  const root = process.env.JOBSCOPE_BENCH_CPU_PROF;
  if (!root) return [];
  // One folder per child: Node writes one profile per thread (tsx's loader runs in a worker).
  const dir = path.join(root, `${tag}-${Date.now()}`);
  fs.mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/** Spawns a node child and resolves once its stdout matches `ready` (group 1 = base URL). */
export function startChild(nodeArgs: string[], ready: RegExp, tag: string): Promise<Child> {
  const proc = spawn(process.execPath, [...cpuProfArgs(tag), ...nodeArgs], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${tag} did not start in 60 s: ${err}`)), 60_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1]!,
          pid: proc.pid!,
          proc,
          async stop() {
            if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
            const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
            await exited;
            clearTimeout(t);
          },
        });
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${tag} exited (${code}) before it was ready: ${err}`));
    });
  });
}

export interface BenchServer extends Child {
  dataDir: string;
  adminToken: string;
  registrationToken: string;
}

/**
 * `jobscope serve` on a fresh data dir in os.tmpdir() (the same disk as the raw references). `nodeArgs`
 * go to node before the bin (`--trace-gc` for bench/experiments/dispatch-tail.ts).
 */
export async function startJobscope(tag: string, extra: string[] = [], nodeArgs: string[] = []): Promise<BenchServer> {
  // Another checkout's server under this checkout's client and reference (bench/experiments/dispatch-ab.ts): an
  // A/B between versions then differs in the server alone.
  const root = process.env.JOBSCOPE_BENCH_SERVER_ROOT || REPO;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `jobscope-bench-${tag}-`));
  const adminToken = `bench-admin-${tag}-0123456789`;
  const registrationToken = `bench-registration-${tag}`;
  const child = await startChild(
    // What `npm run serve` runs: the launcher's esbuild bundle on plain node, not tsx's loader.
    [...nodeArgs, path.join(root, 'bin/jobscope.js'), 'serve', '--port', '0', '--data-dir', dataDir, '--admin-token', adminToken, '--registration-token', registrationToken, '--log-level', 'error', ...extra],
    /Jobscope listening on (http:\/\/\S+)/,
    `jobscope-${tag}`,
  );
  return {
    ...child,
    dataDir,
    adminToken,
    registrationToken,
    async stop() {
      await child.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A bare reference server from bench/reference/, as a child process like the real one. */
export function startReference(script: string, args: string[] = []): Promise<Child> {
  return startChild(['--import', 'tsx', path.join(REPO, 'bench/reference', script), ...args], /listening on (http:\/\/\S+)/, `reference-${script}`);
}

/** Resident set size of a process, in bytes (Linux /proc). */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak. */
export function rssSampler(pid: number, everyMs = 50) {
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      /* process gone */
    }
  };
  sample();
  const t = setInterval(sample, everyMs);
  return {
    stop(): number {
      clearInterval(t);
      sample();
      return peak;
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export function latencyStats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN, n: sorted.length };
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One request on a keep-alive agent; the answer's body is collected (small answers only). A body given
 * as pieces goes chunked (no Content-Length), as a runner streams its upload.
 */
export function send(url: string, opts: { method?: string; headers?: Record<string, string | number>; body?: Buffer | string | Buffer[]; agent?: http.Agent } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = { ...opts.headers };
    const pieces = Array.isArray(opts.body) ? opts.body : undefined;
    if (opts.body !== undefined && !pieces) headers['content-length'] = Buffer.byteLength(opts.body as Buffer | string);
    const req = http.request(url, { method: opts.method ?? 'GET', headers, agent: opts.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (pieces) {
      for (const piece of pieces) req.write(piece);
      req.end();
    } else req.end(opts.body);
  });
}

export async function sendJson<T = unknown>(url: string, method: string, body: unknown, headers: Record<string, string> = {}, agent?: http.Agent): Promise<{ status: number; body: T }> {
  const r = await send(url, { method, agent, headers: { 'content-type': 'application/json', 'user-agent': RUNNER_UA, ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = r.body.toString('utf8');
  return { status: r.status, body: (text && String(r.headers['content-type']).startsWith('application/json') ? JSON.parse(text) : text) as T };
}

export const MiB = 1024 * 1024;
export const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
export const log = (msg: string) => process.stderr.write(`${msg}\n`);

/** Sets up a project and registers a shared runner with it, through the control and runner APIs. */
export async function project(s: BenchServer, name: string): Promise<{ id: number }> {
  const r = await sendJson<{ id: number }>(`${s.url}/api/v3/sim/projects`, 'POST', { name }, { 'private-token': s.adminToken });
  if (r.status !== 201) throw new Error(`create project: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

export async function createBuilds(s: BenchServer, projectId: number, count: number): Promise<void> {
  for (let left = count; left > 0; left -= 10_000) {
    const r = await sendJson(`${s.url}/api/v3/sim/projects/${projectId}/builds`, 'POST', { count: Math.min(10_000, left), commands: 'make test' }, { 'private-token': s.adminToken });
    if (r.status !== 201) throw new Error(`create builds: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  }
}

export async function registerRunner(s: BenchServer, description: string, agent?: http.Agent): Promise<string> {
  const r = await sendJson<{ token: string }>(`${s.url}/ci/api/v1/runners/register.json`, 'POST', { token: s.registrationToken, description }, {}, agent);
  if (r.status !== 201) throw new Error(`register runner: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.token;
}
