// A test runner killed mid-run (a timeout's teardown, a Ctrl-C, kill -9) must leave no `jobscope
// serve` behind: spawnServer gives each server an IPC channel whose close it takes as its parent's
// death. The parent here stands in for a vitest worker: it starts a server through spawnServer,
// prints the server's pid, and is killed with SIGKILL, so none of its own hooks run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { REPO } from './support.ts';
import { waitFor } from '../helpers/wait.ts';

/** Running (not a zombie left for a parent that does not reap): a process the kernel still schedules. */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-orphan-'));
let serverPid = 0;
afterAll(() => {
  if (serverPid && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a server spawned by a test runner that is killed with SIGKILL exits by itself', async () => {
  const script = [
    `import { spawnServer } from ${JSON.stringify(path.join(REPO, 'test/reliability/support.ts'))};`,
    `const s = await spawnServer(['--port', '0', '--data-dir', ${JSON.stringify(dataDir)}, '--log-level', 'error']);`,
    `process.stdout.write('server ' + s.pid + '\\n');`,
    'setInterval(() => {}, 1000);',
  ].join('\n');
  const runner = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  runner.stdout.on('data', (d: Buffer) => (out += d.toString()));
  runner.stderr.on('data', (d: Buffer) => (err += d.toString()));
  serverPid = Number((await waitFor(() => `the server's pid from the stand-in runner (stderr: ${err})`, () => /server (\d+)/.exec(out)?.[1], 60_000, 50)));
  expect(alive(serverPid)).toBe(true);

  runner.kill('SIGKILL');
  await waitFor(`server ${serverPid} to exit after its parent was killed`, () => !alive(serverPid), 20_000, 50);
});
