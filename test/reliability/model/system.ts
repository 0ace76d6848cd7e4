// The real side of the model-based test: a Jobscope server (in this process, or a child process
// that can be killed with SIGKILL), restarted on the same data dir, and one HTTP function through
// which every request goes, so that "no 5xx, ever" is checked on every answer without exception.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { startServer, type TestServer } from '../../helpers/server.ts';
import type { TestRedis } from '../../helpers/redis.ts';
import type { TestPostgres } from '../../helpers/postgres.ts';
import { spawnServer, type ChildServer } from '../support.ts';
import { Wire, type WireReply } from './wire.ts';
import type { LooseJson } from '../../helpers/json.ts';
import type { Outage } from './outage.ts';

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

export class FiveHundred extends Error {
  constructor(
    message: string,
    readonly answer?: Answer,
  ) {
    super(message);
  }
}
/** A 503 with Retry-After and a message during an outage: the model takes the step as not applied. */
export class NotApplied extends Error {}
/** No answer, or (while its bug is listed in known-unfixed.ts) a 5xx, during an outage: the step may or may not have happened. */
export class UnknownOutcome extends Error {}

/**
 * Where the job system and the data live: SQLite in the data dir; the job system on a real
 * redis-server (`--redis`); or builds, runners and jobs in a real PostgreSQL (`--database`), served
 * by two instances on one data dir, each step's requests going to the one the step names.
 */
export type Mode = 'sqlite' | 'redis' | 'pg';
/** The file's redis-server or PostgreSQL cluster: one per file, emptied for each run. */
export interface Backing {
  redis?: TestRedis;
  pg?: TestPostgres;
}
export interface SystemOptions {
  kind: 'inproc' | 'child';
  mode?: Mode;
  backing?: Backing;
  /**
   * No periodic built-in jobs (stuck builds, runner contact, artifact expiry), and no retry due
   * within a run: the job counters then count the model's jobs alone, each once, so a job run twice
   * shows as a processed count too high.
   */
  exact?: boolean;
}
/** Heartbeats every 100 ms, dead after 3 s (the least allowed): a killed instance's jobs run again soon. */
const PROCESS_TTL_S = 3;
const BEAT_MS = 100;
/** During an outage a request that hangs is an outcome unknown, not a wait of the default 30 s. */
const OUTAGE_TIMEOUT_MS = 10_000;
/**
 * The job system's Redis command timeout (--redis-command-timeout-ms; 5 s by default): how long a
 * request waits on a SIGSTOPped Redis before the server answers 503. The default made each stop an
 * idle wait of ~5 s, as long as the stop's own cap (outage.ts), so a request then got a 503 or a
 * late answer by a race; at this value it gets its 503, and the cap comes after it.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 1500;

interface Instance {
  inproc?: TestServer;
  child?: ChildServer;
  wire: Wire;
  url: string;
  up: boolean;
}

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
  /** The first instance's base URL. */
  get url(): string {
    return this.instances[0]!.url;
  }
  /** The last 30 requests and their status, newest last: what a failure message shows (formatted only then). */
  private readonly last: { method: string; url: string; status: number }[] = [];
  readonly remotes = new Remotes();
  readonly instances: Instance[] = [];
  /** The instance the next requests go to (a step picks it in the PostgreSQL mode). */
  target = 0;
  /** Set while a fault is in force: what answers are allowed then (outage.ts). */
  outage: Outage | undefined;
  readonly mode: Mode;
  private static databases = 0;
  private database: string | undefined;

  private constructor(
    readonly kind: 'inproc' | 'child',
    readonly dataDir: string,
    readonly opts: SystemOptions,
  ) {
    this.mode = opts.mode ?? 'sqlite';
  }

  static async start(kindOrOpts: 'inproc' | 'child' | SystemOptions): Promise<RealSystem> {
    const opts = typeof kindOrOpts === 'string' ? { kind: kindOrOpts } : kindOrOpts;
    // Two instances of one data dir kill -9 and restart each other's peer: child processes.
    const kind = opts.mode === 'pg' ? 'child' : opts.kind;
    const sys = new RealSystem(kind, fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-model-')), opts);
    await sys.remotes.start();
    if (sys.mode === 'redis') {
      const client = new Redis(sys.backing('redis').url);
      await client.flushall();
      client.disconnect();
    }
    if (sys.mode === 'pg') sys.database = await sys.backing('pg').createDatabase(`jobscope_model_${process.pid}_${++RealSystem.databases}`);
    const count = sys.mode === 'pg' ? 2 : 1;
    for (let i = 0; i < count; i++) sys.instances.push({ wire: new Wire('127.0.0.1', 0), url: '', up: false });
    // One at a time: the first migrates the database, the second finds it done.
    for (let i = 0; i < count; i++) await sys.boot(i);
    return sys;
  }

  backing<K extends keyof Backing>(k: K): NonNullable<Backing[K]> {
    const b = this.opts.backing?.[k];
    if (!b) throw new Error(`the ${this.mode} mode needs the file's ${k} (SystemOptions.backing)`);
    return b;
  }

  /** The instances serving now. */
  live(): number[] {
    return this.instances.flatMap((x, i) => (x.up ? [i] : []));
  }

  private async boot(i: number): Promise<void> {
    const x = this.instances[i]!;
    // A retry's backoff "second" an hour long: a job in the retry set stays there for the run, so
    // the counters and the retry set's size do not depend on how fast the run went.
    const exact = this.opts.exact ? { stuckBuildsEveryMs: 0, runnerContactEveryMs: 0, artifactExpiryEveryMs: 0, jobBackoffUnitMs: 3_600_000 } : { artifactExpiryEveryMs: EXPIRY_EVERY_MS };
    const where = this.mode === 'redis' ? { redisUrl: this.backing('redis').url, redisCommandTimeoutMs: REDIS_COMMAND_TIMEOUT_MS } : {};
    if (this.kind === 'inproc') {
      x.inproc = await startServer({ dataDir: this.dataDir, adminToken: ADMIN, registrationToken: REGISTRATION, ...exact, ...where, redisProcessTtlS: PROCESS_TTL_S, redisBeatMs: BEAT_MS });
      x.url = x.inproc.url;
    } else {
      const args = ['--port', '0', '--data-dir', this.dataDir, '--admin-token', ADMIN, '--registration-token', REGISTRATION, '--log-level', 'error'];
      for (const [k, v] of Object.entries(exact)) args.push(`--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, String(v));
      if (this.mode === 'redis') args.push('--redis', this.backing('redis').url, '--redis-command-timeout-ms', String(REDIS_COMMAND_TIMEOUT_MS));
      if (this.database) args.push('--database', this.database);
      if (this.mode !== 'sqlite') args.push('--redis-process-ttl-s', String(PROCESS_TTL_S), '--redis-beat-ms', String(BEAT_MS));
      x.child = await spawnServer(args);
      if (this.abandoned) {
        await x.child.kill9();
        throw new Error('the run was abandoned (its test was aborted)');
      }
      x.url = x.child.url;
    }
    // Sockets to the previous process are dead: fresh connections, not a retry on a reset one. The
    // address is parsed once per start here, not per request (~40,000 a test).
    const { hostname, port } = new URL(x.url);
    x.wire.destroy();
    x.wire = new Wire(hostname, Number(port));
    x.up = true;
  }

  private async halt(i: number, how: 'stop' | 'kill9'): Promise<void> {
    const x = this.instances[i]!;
    if (!x.up) return;
    x.up = false;
    x.wire.destroy();
    if (how === 'kill9') {
      if (!x.child) throw new Error('kill -9 needs a child-process server');
      await x.child.kill9();
    } else {
      if (x.inproc) await x.inproc.close({ keepData: true });
      if (x.child) await x.child.stop();
    }
  }

  /** A clean stop (SIGTERM for a child) and a start on the same data dir, of every instance. */
  async restart(): Promise<void> {
    for (let i = 0; i < this.instances.length; i++) await this.halt(i, 'stop');
    for (let i = 0; i < this.instances.length; i++) await this.boot(i);
  }

  /** kill -9 of every instance, and a start. */
  async kill9(): Promise<void> {
    for (let i = 0; i < this.instances.length; i++) await this.halt(i, 'kill9');
    for (let i = 0; i < this.instances.length; i++) await this.boot(i);
  }

  /** kill -9 of one instance, left down until startInstance(i): the other serves meanwhile. */
  async killInstance(i: number): Promise<void> {
    await this.halt(i, 'kill9');
    if (this.target === i) this.target = this.live()[0] ?? 0;
  }

  async startInstance(i: number): Promise<void> {
    if (!this.instances[i]!.up) await this.boot(i);
  }

  /** Set by killServers: an instance that finishes starting after it is killed at once. */
  private abandoned = false;

  /** kill -9 of the child-process instances now, whatever a step is doing with them (an abandoned run). */
  killServers(): void {
    this.abandoned = true;
    for (const x of this.instances) {
      x.up = false;
      x.child?.proc.kill('SIGKILL');
    }
  }

  async close(): Promise<void> {
    for (const x of this.instances) {
      x.wire.destroy();
      if (x.inproc) await x.inproc.close({ keepData: true });
      if (x.child) await x.child.kill9();
    }
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
    const outage = this.outage;
    const x = this.instances[this.target]!;
    if (!x.up) throw new Error(`${method} ${url}: instance ${this.target} is down (a step must pick a live one)`);
    const done = (r: WireReply): Answer => {
      const { status, body } = r;
      this.last.push({ method, url: this.instances.length > 1 ? `[${this.target}] ${url}` : url, status });
      if (this.last.length > 30) this.last.shift();
      const answer = { status, headers: r.headers, body, json: () => JSON.parse(body.toString('utf8')) };
      const what = () => `${status} on ${method} ${url}: ${body.toString('utf8').slice(0, 500)}\nrecent requests:\n  ${this.recent.join('\n  ')}`;
      if (status >= 500 && outage) outage.answered(answer, what);
      // A 500 is a bug the server logged with its stack: the failure shows it (a child's stderr).
      if (status >= 500) throw new FiveHundred(status === 500 && x.child ? `${what()}\nserver log:\n${x.child.log().slice(-3000)}` : what(), answer);
      return answer;
    };
    return x.wire.request(method, url, headers, opts.body, outage ? OUTAGE_TIMEOUT_MS : 30_000).then(done, (err: Error) => {
      // No answer (done's own throws do not come here): during an outage the step's outcome is unknown.
      if (outage) throw new UnknownOutcome(`${method} ${url} during ${outage.what}: ${err.message}`);
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
