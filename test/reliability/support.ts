// Shared by the reliability suite: a seeded PRNG, a server run as a child process (so it can be
// killed with SIGKILL), and the two runner requests that stream: trace parts and chunked artifacts.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LooseJson } from '../helpers/json.ts';
import { Prng } from '../../common/prng.ts';
import { jobscopeNodeArgs } from '../helpers/cli-process.ts';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const RUNNER_UA = 'gitlab-ci-multi-runner 1.11.5 (1-11-stable; go1.19.8; linux/amd64)';

/** The seed of a suite: JOBSCOPE_SEED when given (to replay a failure), else the suite's fixed one. */
export function seedOf(name: string, fallback: number): number {
  const env = Number(process.env.JOBSCOPE_SEED);
  const seed = Number.isInteger(env) && env > 0 ? env : fallback;
  console.log(`[${name}] seed ${seed} (replay with JOBSCOPE_SEED=${seed})`);
  return seed;
}

/** The project's seeded generator (common/prng.ts, mulberry32) with the helpers these suites need; the same seed gives the same run. */
export function prng(seed: number) {
  const p = new Prng(seed);
  const next = () => p.next();
  return {
    next,
    int: (lo: number, hi: number) => p.int(lo, hi),
    pick: <T>(xs: readonly T[]): T => p.pick(xs),
    bytes(n: number): Buffer {
      const b = Buffer.allocUnsafe(n);
      p.fill(b);
      return b;
    },
    /** Printable trace-like text (with ANSI colour escapes and UTF-8), deterministic. */
    text(n: number): Buffer {
      const words = ['$ make test', 'ok', '\x1b[32mpassed\x1b[0m', 'Größe', 'läuft…', 'step', '\n', '\r\n', 'Ω', 'build'];
      const parts: string[] = [];
      let len = 0;
      while (len < n) {
        const w = p.pick(words);
        parts.push(w, ' ');
        len += Buffer.byteLength(w) + 1;
      }
      return Buffer.from(parts.join('')).subarray(0, n);
    },
  };
}
export type Rng = ReturnType<typeof prng>;

export interface ChildServer {
  url: string;
  proc: ChildProcess;
  pid: number;
  /** stderr so far, for failure messages. */
  log(): string;
  kill9(): Promise<void>;
  stop(): Promise<number | null>;
}

/** The servers spawnServer started that have not exited yet. */
const running = new Set<ChildProcess>();

function killGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  try {
    process.kill(-proc.pid!, signal);
  } catch {
    proc.kill(signal);
  }
}

/** The pids of the servers spawnServer started that are still running. */
export const spawnedServerPids = (): number[] => [...running].map((p) => p.pid!);

/** kill -9 of every server spawnServer started that is still running (each with its process group). */
export function killSpawnedServers(): void {
  for (const proc of running) killGroup(proc, 'SIGKILL');
}
// A worker that ends (its file done, or torn down after a timeout) takes its servers with it.
process.once('exit', killSpawnedServers);

/** Starts `jobscope serve` as a child process and resolves once it prints its listening line. */
export async function spawnServer(args: string[], opts: { env?: NodeJS.ProcessEnv; wrap?: string[]; timeoutMs?: number } = {}): Promise<ChildServer> {
  const cmd = [...(opts.wrap ?? []), process.execPath, ...(await jobscopeNodeArgs()), 'serve', ...args];
  // Its own process group (a wrapper's children go with it), and an IPC channel whose close the
  // server takes as its parent's death (hosts/parent-watch.ts): a test runner killed or timed out
  // leaves no server behind, whatever ran its hooks.
  const proc = spawn(cmd[0]!, cmd.slice(1), { cwd: REPO, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'], detached: true });
  proc.channel?.unref();
  running.add(proc);
  let err = '';
  let out = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8000)));
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      running.delete(proc);
      resolve(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${err}`)), opts.timeoutMs ?? 30_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Jobscope listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${err}`));
    });
  });
  return {
    url,
    proc,
    pid: proc.pid!,
    log: () => err,
    async kill9() {
      killGroup(proc, 'SIGKILL');
      await exited;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request over node:http (no fetch: it must stream bodies and tolerate any answer). */
export function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string | number>; body?: Buffer | string; timeoutMs?: number; agent?: http.Agent } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers = { ...opts.headers };
    // Framed explicitly: node:http sends a HEAD or GET body unframed otherwise.
    if (opts.body !== undefined && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) headers['content-length'] = Buffer.byteLength(opts.body);
    const req = http.request(url, { method: opts.method ?? 'GET', headers, agent: opts.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(opts.timeoutMs ?? 15_000, () => req.destroy(new Error(`timeout: ${opts.method ?? 'GET'} ${url}`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

export async function json<T = LooseJson>(url: string, method: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
  const r = await request(url, { method, headers: { 'content-type': 'application/json', 'user-agent': RUNNER_UA, ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = r.body.toString('utf8');
  return { status: r.status, body: (text && (r.headers['content-type'] ?? '').startsWith('application/json') ? JSON.parse(text) : text) as T };
}

/** PATCH one trace part the way the runner does: Content-Range "start-end", end exclusive. */
export function patchTrace(base: string, buildId: number, token: string, start: number, bytes: Buffer, agent?: http.Agent) {
  return request(`${base}/ci/api/v1/builds/${buildId}/trace.txt`, {
    method: 'PATCH',
    agent,
    headers: { 'content-type': 'text/plain', 'content-range': `${start}-${start + bytes.length}`, 'build-token': token, 'user-agent': RUNNER_UA },
    body: bytes,
  });
}

/** The end of a `Range: 0-N` answer header. */
export function rangeEnd(headers: http.IncomingHttpHeaders): number {
  const m = /^0-(\d+)$/.exec(String(headers.range ?? ''));
  if (!m) throw new Error(`no Range header in ${JSON.stringify(headers)}`);
  return Number(m[1]);
}

export interface UploadHandle {
  /** Resolves with the answer, or rejects when the connection dies. */
  done: Promise<Reply>;
  /** True once the whole body was handed to the socket (before that, the server cannot have it). */
  sentAll(): boolean;
}

/** A chunked multipart upload as the runner's artifacts-uploader sends it (no Content-Length). */
export function uploadArtifact(
  base: string,
  buildId: number,
  token: string,
  content: Buffer,
  opts: { filename?: string; chunk?: number; query?: string; stallAfter?: number; paceMs?: number } = {},
): UploadHandle {
  const boundary = `jobscope${Math.floor(content.length * 7919 + buildId).toString(16)}boundary`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${opts.filename ?? 'artifacts.zip'}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  let all = false;
  const done = new Promise<Reply>((resolve, reject) => {
    const req = http.request(
      `${base}/ci/api/v1/builds/${buildId}/artifacts${opts.query ?? '?expire_in=1+week'}`,
      {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'build-token': token, 'user-agent': RUNNER_UA, 'transfer-encoding': 'chunked' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error('upload timeout')));
    req.on('error', reject);
    const step = opts.chunk ?? 64 * 1024;
    let off = 0;
    req.write(head);
    const pump = () => {
      // A stalled upload stops mid-body for good: the server must never show it.
      if (opts.stallAfter !== undefined && off >= opts.stallAfter) return;
      if (off < content.length) {
        const piece = content.subarray(off, off + step);
        off += piece.length;
        // Yield between chunks so a kill can land mid-body, as it does with a real runner.
        // paceMs: a slow link, one chunk per interval.
        const next = () => (opts.paceMs ? setTimeout(pump, opts.paceMs) : setImmediate(pump));
        if (!req.write(piece)) req.once('drain', next);
        else next();
        return;
      }
      req.end(tail, () => (all = true));
    };
    pump();
  });
  return { done, sentAll: () => all };
}
