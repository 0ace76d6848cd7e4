// vitest's globalSetup for the PostgreSQL clusters that test/helpers/postgres.ts shares per worker:
// a folder for them, given to the workers, and at the end of the run every postmaster still running
// there stopped and the folder removed. Vitest stops a worker with SIGTERM and SIGKILL 0.5 s later,
// so a worker only signals its postmaster (or is killed before it can); waiting for the shutdown
// and the removal happen here.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { alive, postmasterPid } from './postgres.ts';

/** Stops the postmasters under `root` (immediate shutdown) and removes it. */
export async function removeClusters(root: string): Promise<void> {
  const pids: number[] = [];
  for (const entry of fs.existsSync(root) ? fs.readdirSync(root) : []) {
    const pid = postmasterPid(path.join(root, entry, 'data'));
    if (pid && alive(pid)) {
      process.kill(pid, 'SIGQUIT');
      pids.push(pid);
    }
  }
  const until = Date.now() + 30_000;
  while (pids.some(alive) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
  for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
  fs.rmSync(root, { recursive: true, force: true });
}

export default function setup(project: TestProject): () => Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pg-run-'));
  // The clusters' folders inside are handed to the postgres user when we are root: it must reach them.
  fs.chmodSync(root, 0o755);
  project.provide('jobscopePgRoot', root);
  return () => removeClusters(root);
}
