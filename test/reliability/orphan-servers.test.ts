// A test runner killed mid-run (a timeout's teardown, a Ctrl-C, kill -9) must leave no `jobscope
// serve` behind: spawnServer gives each server an IPC channel whose close it takes as its parent's
// death. And a model run whose test timed out stops, servers first, instead of going on unseen.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { REPO, spawnedServerPids } from './support.ts';
import { runModel } from './model/run.ts';
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

// The parent stands in for a vitest worker: it starts a server through spawnServer, prints the
// server's pid, and is killed with SIGKILL, so none of its own hooks run.
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

test('a model run stops when its test is aborted (a timeout): its servers are killed and no further run starts', async () => {
  const abort = new AbortController();
  const before = new Set(spawnedServerPids());
  const run = runModel({ name: 'abort', kind: 'child', numRuns: 20, maxCommands: 600, restartWeight: 0, killWeight: 0, seed: 20260602, signal: abort.signal });
  const settled = run.then(
    () => 'resolved',
    () => 'rejected',
  );
  const pids = await waitFor('the model run to start its server', () => {
    const mine = spawnedServerPids().filter((p) => !before.has(p));
    return mine.length > 0 && mine;
  }, 60_000, 50);
  abort.abort(new Error('test timed out'));
  await waitFor('the aborted model run to end', async () => (await Promise.race([settled, new Promise((r) => setTimeout(r, 50, undefined))])) as string | undefined, 20_000, 0);
  for (const pid of pids) expect(alive(pid), `server ${pid} of the aborted run`).toBe(false);
  expect(spawnedServerPids().filter((p) => !before.has(p))).toEqual([]);
});
