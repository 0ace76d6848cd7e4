// A real redis-server for a test: a free port on 127.0.0.1, a temp dir, no persistence. Debian's
// redis-server 7 (`apt-get install redis-server`; .ci/run installs it). stop() ends it and removes the dir.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface TestRedis {
  port: number;
  url: string;
  dir: string;
  pid: number;
  /** SIGSTOP: the server keeps its socket open but answers nothing (a "slow" Redis). */
  pause(): void;
  resume(): void;
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

/** Starts redis-server; `args` are extra options, e.g. ['--requirepass', 'secret']. */
export async function startRedis(args: string[] = []): Promise<TestRedis> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-redis-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', path.join(dir, 'redis.log'), ...args],
    { stdio: 'ignore' },
  );
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  // Wait for the port to accept, not for a fixed time: the machine may be loaded.
  for (;;) {
    if (exited) throw new Error(`redis-server exited at start; see ${path.join(dir, 'redis.log')}`);
    if (await canConnect(port)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    dir,
    pid: child.pid!,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
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
