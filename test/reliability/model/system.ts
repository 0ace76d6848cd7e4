// The real side of the model-based test: a Jobscope server (in this process, or a child process
// that can be killed with SIGKILL), restarted on the same data dir, and one HTTP function through
// which every request goes, so that "no 5xx, ever" is checked on every answer without exception.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startServer, type TestServer } from '../../helpers/server.ts';
import { spawnServer, type ChildServer } from '../support.ts';
import { Wire, type WireReply } from './wire.ts';
import type { LooseJson } from '../../helpers/json.ts';

export const ADMIN = 'model-admin-token-0123456789abcdef';
export const REGISTRATION = 'model-registration-token-0123456789';
export const RUNNER_UA = 'gitlab-ci-multi-runner 1.11.5 (1-11-stable; go1.19.8; linux/amd64)';
/** Short so that the sweep's removals happen inside a run; the model treats a past expiry as "may be gone". */
const EXPIRY_EVERY_MS = 100;

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json(): LooseJson;
}

export class FiveHundred extends Error {}

/** What a stand-in remote GitLab received: the origin it was asked as (Host) and the PRIVATE-TOKEN sent. */
export interface Received {
  origin: string;
  token: string | undefined;
  at: number;
}

/**
 * Two stand-in remotes on loopback, each its own origin (and a third by naming the first as
 * localhost): connections point at them, and every token they receive is checked against the
 * origin it was given for. They answer 404, so a sample is quick and stores nothing.
 */
class Remotes {
  readonly received: Received[] = [];
  private servers: http.Server[] = [];
  urls: string[] = [];

  async start(): Promise<void> {
    for (let i = 0; i < 2; i++) {
      const server = http.createServer((req, res) => {
        const token = req.headers['private-token'];
        this.received.push({ origin: `http://${req.headers.host}`, token: Array.isArray(token) ? token.join(',') : token, at: Date.now() });
        if (this.received.length > 10_000) this.received.splice(0, 5_000);
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"404 Not Found"}');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      this.servers.push(server);
    }
    const ports = this.servers.map((s) => (s.address() as { port: number }).port);
    this.urls = [`http://127.0.0.1:${ports[0]}`, `http://127.0.0.1:${ports[0]}/gitlab`, `http://localhost:${ports[0]}`, `http://127.0.0.1:${ports[1]}`];
  }

  async close(): Promise<void> {
    for (const s of this.servers) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  }
}

export class RealSystem {
  url = '';
  /** The last 30 requests and their status, newest last: what a failure message shows (formatted only then). */
  private readonly last: { method: string; url: string; status: number }[] = [];
  private wire = new Wire('127.0.0.1', 0);
  readonly remotes = new Remotes();
  private inproc?: TestServer;
  private child?: ChildServer;

  private constructor(
    readonly kind: 'inproc' | 'child',
    readonly dataDir: string,
  ) {}

  static async start(kind: 'inproc' | 'child'): Promise<RealSystem> {
    const sys = new RealSystem(kind, fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-model-')));
    await sys.remotes.start();
    await sys.boot();
    return sys;
  }

  private async boot(): Promise<void> {
    if (this.kind === 'inproc') {
      this.inproc = await startServer({ dataDir: this.dataDir, adminToken: ADMIN, registrationToken: REGISTRATION, artifactExpiryEveryMs: EXPIRY_EVERY_MS });
      this.url = this.inproc.url;
    } else {
      const args = ['--port', '0', '--data-dir', this.dataDir, '--admin-token', ADMIN, '--registration-token', REGISTRATION, '--log-level', 'error'];
      this.child = await spawnServer([...args, '--artifact-expiry-every-ms', String(EXPIRY_EVERY_MS)]);
      this.url = this.child.url;
    }
    // Sockets to the previous process are dead: fresh connections, not a retry on a reset one. The
    // address is parsed once per start here, not per request (~40,000 a test).
    const { hostname, port } = new URL(this.url);
    this.wire.destroy();
    this.wire = new Wire(hostname, Number(port));
  }

  /** A clean stop (SIGTERM for a child) and a start on the same data dir. */
  async restart(): Promise<void> {
    if (this.inproc) await this.inproc.close({ keepData: true });
    if (this.child) await this.child.stop();
    await this.boot();
  }

  async kill9(): Promise<void> {
    if (!this.child) throw new Error('kill -9 needs a child-process server');
    await this.child.kill9();
    await this.boot();
  }

  async close(): Promise<void> {
    this.wire.destroy();
    if (this.inproc) await this.inproc.close({ keepData: true });
    if (this.child) await this.child.kill9();
    await this.remotes.close();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  /** Every request and its status, newest last: what a failure message shows. */
  get recent(): string[] {
    return this.last.map((r) => `${r.method} ${r.url} -> ${r.status}`);
  }

  /** One request; a 5xx (or no answer) throws at once. */
  request(method: string, url: string, opts: { headers?: Record<string, string | number>; body?: Buffer | string } = {}): Promise<Answer> {
    const headers: Record<string, string | number> = { 'user-agent': RUNNER_UA, ...opts.headers };
    if (opts.body !== undefined && headers['content-length'] === undefined) headers['content-length'] = Buffer.byteLength(opts.body);
    const done = (r: WireReply): Answer => {
      const { status, body } = r;
      this.last.push({ method, url, status });
      if (this.last.length > 30) this.last.shift();
      if (status >= 500) throw new FiveHundred(`${status} on ${method} ${url}: ${body.toString('utf8').slice(0, 500)}\nrecent requests:\n  ${this.recent.join('\n  ')}`);
      return { status, headers: r.headers, body, json: () => JSON.parse(body.toString('utf8')) };
    };
    return this.wire.request(method, url, headers, opts.body, 30_000).then(done, (err: Error) => {
      throw new Error(`${method} ${url}: ${err.message}\nrecent requests:\n  ${this.recent.join('\n  ')}`);
    });
  }

  /** JSON in, admin token on. */
  admin(method: string, url: string, json?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
    const headers: Record<string, string> = { 'private-token': ADMIN, ...extra };
    if (json !== undefined) headers['content-type'] = 'application/json';
    return this.request(method, url, { headers, body: json === undefined ? undefined : JSON.stringify(json) });
  }

  /** A runner API call with a JSON body, the way runner 1.11 sends register, poll and update. */
  runner(method: string, url: string, json: unknown): Promise<Answer> {
    return this.request(method, url, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) });
  }
}
