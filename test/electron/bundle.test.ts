// The compiled shell (dist-electron/main.js, as packaged) runs in plain Node with 'electron' swapped
// for a stand-in: the bundle loads, finds its package root, opens SQLite (WASM) in userData, serves
// the UI with its CSP, answers the bridge, reports mode "electron", and quits after closing the server.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../server/ui/package-root.ts';
import { tempDir } from '../helpers/server.ts';

const root = packageRoot();
const userData = tempDir('jobscope-bundle-');
afterAll(() => fs.rmSync(userData, { recursive: true, force: true }));

describe('compiled Electron shell', () => {
  it('builds, starts its backend, serves the page and quits cleanly', () => {
    const build = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build-electron.ts'], { cwd: root, encoding: 'utf8' });
    expect(build.status, build.stderr).toBe(0);
    const run = spawnSync(process.execPath, ['--import', path.join(root, 'test/electron/fixtures/register-fake-electron.mjs'), path.join(root, 'dist-electron/main.js')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, FAKE_USER_DATA: userData, JOBSCOPE_LOG_LEVEL: 'silent', JOBSCOPE_MONITOR_INTERVAL_MS: '3600000' },
    });
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]!.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, preload: path.join(root, 'dist-electron/preload.cjs') });
    const loaded = lines.find((l) => 'loaded' in l)!;
    expect(loaded.loaded).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(loaded.csp).toMatch(/script-src 'self'/);
    expect(lines.find((l) => 'status' in l && typeof l.status === 'object')!.status).toMatchObject({ mode: 'electron', data_dir: userData });
    expect(lines.find((l) => 'trayIcon' in l)!.trayIcon).toBe(path.join(root, 'dist/renderer/tray-icon.png'));
    expect(lines.at(-1)).toEqual({ quit: true });
    expect(fs.existsSync(path.join(userData, 'jobscope.db'))).toBe(true);
    expect(fs.existsSync(path.join(userData, 'jobscope.pid'))).toBe(false); // released on the way out
    expect(fs.existsSync(path.join(root, 'dist-electron/preload.cjs'))).toBe(true);
  }, 60_000);
});
