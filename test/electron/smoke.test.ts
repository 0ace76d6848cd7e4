// The real Electron binary, where it is installed: the compiled shell starts, its backend takes the
// data dir, and a SIGTERM quits it cleanly. Electron downloads its binary on first use, which these
// build machines cannot do, so here this test is skipped (the faked-Electron tests cover the logic).
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { electronBinary } from '../../scripts/electron-binary.ts';
import { packageRoot } from '../../server/ui/package-root.ts';
import { tempDir } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const root = packageRoot();
const bin = electronBinary(root);

describe.skipIf(!bin)('Electron smoke (skipped: the Electron binary is not installed on this machine)', () => {
  it('starts the desktop app, which opens the data dir, and quits on SIGTERM', async () => {
    expect(spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build-electron.ts'], { cwd: root }).status).toBe(0);
    const userData = tempDir('jobscope-electron-smoke-');
    const args = [root, `--user-data-dir=${userData}`, '--no-sandbox', '--disable-gpu'];
    const xvfb = !process.env.DISPLAY && fs.existsSync('/usr/bin/xvfb-run');
    const child = xvfb ? spawn('/usr/bin/xvfb-run', ['-a', bin!, ...args], { cwd: root }) : spawn(bin!, args, { cwd: root });
    try {
      const db = path.join(userData, 'jobscope.db');
      await waitFor("the data dir's database", () => fs.existsSync(db), 30_000, 200);
      expect(fs.existsSync(db)).toBe(true);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(userData, { recursive: true, force: true });
    }
  }, 60_000);
});
