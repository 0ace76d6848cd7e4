// A real redis-server for a test: a free port on 127.0.0.1, a temp dir, no persistence. Debian's
// redis-server 7 (`apt-get install redis-server`; .ci/run installs it). stop() ends it and removes the dir.
// useRedis() gives a file one, with a client; redisBackends() job backends on it, cleaned after each test.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { RedisJobBackend } from '../../server/store/redis/job-backend.ts';

export interface TestRedis {
  port: number;
  url: string;
  dir: string;
  pid: number;
  /** SIGSTOP: the server keeps its socket open but answers nothing (a "slow" Redis). */
  pause(): void;
  resume(): void;
  /** SIGKILL, and the exit awaited: what it had not written to its files is gone. */
  kill9(): Promise<void>;
  /** Starts it again on the same port, dir and options (after kill9 or stop): an append-only file is read back. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => (sock.destroy(), resolve(true)));
    sock.once('error', () => resolve(false));
  });
}

/**
 * Starts redis-server; `args` are extra options, e.g. ['--requirepass', 'secret'] (later options win);
 * `at` names the port (one nothing listens on yet) and dir to use.
 */
export async function startRedis(args: string[] = [], at: { port?: number; dir?: string } = {}): Promise<TestRedis> {
  const dir = at.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-redis-'));
  const port = at.port ?? (await freePort());
  let child!: ChildProcess;
  let exited = false;
  let exit!: Promise<void>;
  const launch = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', path.join(dir, 'redis.log'), ...args],
      { stdio: 'ignore' },
    );
    exited = false;
    const proc = child;
    exit = new Promise<void>((resolve) => proc.once('exit', () => ((exited = true), resolve())));
    // Wait for the port to accept, not for a fixed time: the machine may be loaded.
    for (;;) {
      if (exited) throw new Error(`redis-server exited at start; see ${path.join(dir, 'redis.log')}`);
      if (await canConnect(port)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    dir,
    get pid() {
      return child.pid!;
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async kill9() {
      if (!exited) child.kill('SIGKILL');
      await exit;
    },
    async restart() {
      if (!exited) throw new Error('redis-server is still running: kill9() or stop() it first');
      await launch();
    },
    async stop() {
      if (!exited) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        await exit;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The file's redis-server and a client on it: started before its tests, stopped after them. */
export interface RedisHandle {
  readonly url: string;
  readonly client: Redis;
  /** The redis-server itself: to kill, stop or restart it. */
  readonly server: TestRedis;
}

/** `args`: startRedis's extra options (e.g. append-only). */
export function useRedis(args: string[] = []): RedisHandle {
  let server: TestRedis | undefined;
  let client: Redis | undefined;
  beforeAll(async () => {
    server = await startRedis(args);
    client = new Redis(server.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });
  return {
    get url() {
      return server!.url;
    },
    get client() {
      return client!;
    },
    get server() {
      return server!;
    },
  };
}

/**
 * A factory of job backends on the file's Redis, each recovered (and then passed to `ready`);
 * after each test every one made leaves and the database is emptied.
 */
export function redisBackends(redis: RedisHandle, opts: { kindOf?: (cls: string) => string | undefined; ready?: (b: RedisJobBackend) => Promise<unknown> } = {}): () => Promise<RedisJobBackend> {
  const open: RedisJobBackend[] = [];
  afterEach(async () => {
    for (const b of open.splice(0)) await b.leave();
    await redis.client.flushdb();
  });
  return async () => {
    const b = new RedisJobBackend({ url: redis.url, processTtlS: 60, now: () => Date.now(), kindOf: opts.kindOf ?? (() => undefined), maxQueuesRead: 1000, Redis });
    open.push(b);
    await b.recover();
    await opts.ready?.(b);
    return b;
  };
}
