// The start's phase log (server/start-phases.ts): every host's server records where its start went,
// `serve` prints it beside its listening line, and bench/startup.ts reads it from there per round.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startServer, tempDir } from './helpers/server.ts';
import { jobscopeNodeArgs, REPO } from './helpers/cli-process.ts';
import { waitFor } from './helpers/wait.ts';
import { phasesOf } from '../bench/startup.ts';
import { START_UP_MS } from '../hosts/v8-flags.js';

const PHASES = ['modules', 'store', 'routes', 'services', 'listen'];
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

it('a started server holds its phases in order, each timed, and answers its first request', async () => {
  const s = await startServer();
  try {
    const phases = s.server.startPhases.list;
    expect(phases.map((p) => p.name)).toEqual(PHASES);
    for (const p of phases) expect(p.ms).toBeGreaterThanOrEqual(0);
    expect(s.server.startPhases.toString()).toMatch(/^modules \d+ ms, store \d+ ms, routes \d+ ms, services \d+ ms, listen \d+ ms$/);
    const res = await fetch(`${s.url}/api/app/status`, { headers: { 'PRIVATE-TOKEN': s.adminToken } });
    expect(res.status).toBe(200);
  } finally {
    await s.close();
  }
});

it('`serve` prints the phases before its listening line, as the start bench reads them', async () => {
  const dataDir = tempDir();
  dirs.push(dataDir);
  const child = spawn(process.execPath, [...(await jobscopeNodeArgs()), 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'error'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    // Two pipes: either line may be read first.
    await new Promise<void>((resolve, reject) => {
      const check = () => /Jobscope listening on/.test(stdout) && /^Started in /m.test(stderr) && resolve();
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        check();
      });
      child.stderr.on('data', check);
      void exited.then(() => reject(new Error(`exited before listening: ${stderr}`)));
    });
    const phases = phasesOf(stderr);
    expect(Object.keys(phases)).toEqual(PHASES);
    for (const name of PHASES) expect(phases[name]).toBeGreaterThanOrEqual(0);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});

it('`serve` lets the young generation grow again once it listens and has warmed up, not seconds later', async () => {
  // Held small through start-up for idle RSS (hosts/v8-tuning.ts); a server taking load seconds after
  // its start (the dispatch bench's phases) ran with a scavenge every ~25 ms while it stayed held.
  const dataDir = tempDir();
  dirs.push(dataDir);
  const probe = path.join(REPO, 'test', 'helpers', 'young-generation-probe.mjs');
  const child = spawn(process.execPath, ['--import', probe, ...(await jobscopeNodeArgs()), 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'error'], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitFor(() => `the start and the end of the hold: ${stderr}`, () => /^Started in /m.test(stderr) && /young generation grows again at \d+ ms/.test(stderr), 30_000);
    // The phases run from the process's start to the listening line, on the child's clock.
    const listenedAt = Object.values(phasesOf(stderr)).reduce((a, b) => a + b, 0);
    const growsAt = Number(/young generation grows again at (\d+) ms/.exec(stderr)![1]);
    expect(growsAt).toBeGreaterThanOrEqual(listenedAt - 5); // phases are rounded to the ms
    expect(growsAt - listenedAt).toBeLessThan(START_UP_MS / 3);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});
