// The offline packaging check: electron-builder runs on the real config with a stand-in Electron
// (electronDist), because the Electron zip cannot be downloaded here; then app.asar is inspected.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const bin = (name: string) => path.join(root, 'node_modules/.bin', name);
let work: string;
let entries: string[] = [];
let unpacked: string;

beforeAll(() => {
  if (!fs.existsSync(path.join(root, 'dist/renderer/index.html'))) {
    throw new Error('dist/renderer is not built: run `npm run build:ui` (npm test does it first)');
  }
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-electron.ts'], { cwd: root, stdio: 'pipe' });
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pack-'));
  const standIn = path.join(work, 'electron-dist');
  fs.mkdirSync(standIn);
  fs.writeFileSync(path.join(standIn, 'electron'), '#!/bin/sh\necho "stand-in Electron for the offline packaging check"\n', { mode: 0o755 });
  const electronVersion = JSON.parse(fs.readFileSync(path.join(root, 'node_modules/electron/package.json'), 'utf8')).version as string;
  fs.writeFileSync(path.join(standIn, 'version'), electronVersion);
  execFileSync(
    bin('electron-builder'),
    ['--linux', 'dir', '--config', 'electron-builder.yml', `-c.electronDist=${standIn}`, `-c.directories.output=${path.join(work, 'out')}`],
    { cwd: root, stdio: 'pipe', env: { ...process.env, CI: 'true' }, timeout: 180_000 },
  );
  const resources = path.join(work, 'out/linux-unpacked/resources');
  unpacked = path.join(resources, 'app.asar.unpacked');
  entries = execFileSync(bin('asar'), ['list', path.join(resources, 'app.asar')], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\n')
    .filter(Boolean);
}, 240_000);

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('packaged app (linux dir, stand-in Electron)', () => {
  it('holds the built main, preload and renderer', () => {
    for (const f of ['/package.json', '/dist-electron/main.js', '/dist-electron/preload.cjs', '/dist/renderer/index.html']) expect(entries).toContain(f);
    expect(entries.some((e) => /^\/dist\/renderer\/assets\/index-.*\.js$/.test(e))).toBe(true);
  });

  it('holds the server (bundled into main.js) and its runtime packages', () => {
    const main = fs.readFileSync(path.join(root, 'dist-electron/main.js'), 'utf8');
    for (const marker of ['/ci/api/v1', 'compound_metrics', 'buildServer']) expect(main).toContain(marker);
    for (const pkg of ['fastify', '@fastify/multipart', '@fastify/static', 'node-sqlite3-wasm', 'yauzl']) {
      expect(entries, pkg).toContain(`/node_modules/${pkg}/package.json`);
    }
    // The SQLite engine is read from a real file next to the archive.
    expect(fs.existsSync(path.join(unpacked, 'node_modules/node-sqlite3-wasm/dist/node-sqlite3-wasm.wasm'))).toBe(true);
  });

  it('holds no dev-only package and no TypeScript source', () => {
    const devOnly = ['react', 'react-dom', 'vite', 'vitest', 'electron', 'electron-builder', 'typescript', 'tsx', 'esbuild', 'playwright-core', '@playwright/test', 'axios', 'eslint'];
    const present = devOnly.filter((p) => entries.includes(`/node_modules/${p}/package.json`));
    expect(present).toEqual([]);
    expect(entries.filter((e) => e.endsWith('.ts') && !e.endsWith('.d.ts') && !e.startsWith('/node_modules/'))).toEqual([]);
  });
});
