// The start's phase log (server/start-phases.ts): every host's server records where its start went,
// `serve` prints it beside its listening line, and bench/startup.ts reads it from there per round.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { startServer, tempDir } from './helpers/server.ts';
import { jobscopeNodeArgs, REPO } from './helpers/cli-process.ts';
import { phasesOf } from '../bench/startup.ts';

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
