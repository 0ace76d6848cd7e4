// scripts/build-bundle.ts, as the packaged app is built: the V8 tuning must run before any npm package
// loads (SQLite's WebAssembly compiles when its package is evaluated, and loading ~450 modules grows
// the young generation), and the bundle must still serve.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/server.ts';
import { bodyOf } from '../../scripts/build-bundle.ts';

const root = path.resolve(import.meta.dirname, '../..');
// Inside the repo: the bundle's npm packages resolve from its node_modules.
const outDir = path.join(root, '.tmp', `host-bundle-test-${process.pid}`);
const dataDir = tempDir('jobscope-host-bundle-');
afterAll(() => {
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Preloaded: how many CommonJS modules had run, and whether SQLite's had, at the tuning's first flag.
 * (ESM links before it evaluates: a package the bundle imports is in the cache, not yet run, already.)
 */
const PROBE = `
import v8 from 'node:v8';
import { createRequire } from 'node:module';
const cache = createRequire(import.meta.url).cache;
const ran = () => Object.values(cache).filter((m) => m.loaded);
const sqlite = () => ran().some((m) => m.id.includes('node-sqlite3-wasm'));
const set = v8.setFlagsFromString;
let seen;
v8.setFlagsFromString = (flags) => {
  seen ??= { flags, modules: ran().length, sqlite: sqlite() };
  return set(flags);
};
const zip = () => ran().some((m) => m.id.includes('/yauzl/'));
const docs = () => ran().some((m) => /@fastify[\\/]swagger/.test(m.id));
const http2 = () => process.moduleLoadList.includes('NativeModule http2');
process.on('exit', () => process.stderr.write('PROBE ' + JSON.stringify({ seen, modulesAtExit: ran().length, sqliteAtExit: sqlite(), zipAtExit: zip(), docsAtExit: docs(), http2AtExit: http2() }) + '\\n'));
`;

/** Starts the bundle (preloaded with the probe); its URL, admin token, stderr so far and a stop that resolves to the probe's report. */
async function start(out: string, probe: string, dir: string) {
  const child = spawn(process.execPath, ['--import', probe, out, 'serve', '--port', '0', '--data-dir', dir, '--log-level', 'error'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    // The code cache saved as soon as the bundle has run, not 3 s later (scripts/code-cache.js).
    env: { ...process.env, JOBSCOPE_CODE_CACHE_DEBUG: '1', JOBSCOPE_CODE_CACHE_SAVE_MS: '0' },
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = /Jobscope listening on (http:\/\/\S+)/.exec(stdout);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  return {
    url,
    token: /PRIVATE-TOKEN\): (\S+)/.exec(stderr)![1]!,
    stderr: () => stderr,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.on('exit', r));
      return JSON.parse(/PROBE (.*)/.exec(stderr)![1]!) as { seen: { flags: string; modules: number; sqlite: boolean }; modulesAtExit: number; sqliteAtExit: boolean; zipAtExit: boolean; docsAtExit: boolean; http2AtExit: boolean };
    },
  };
}

describe('host bundle (scripts/build-bundle.ts)', () => {
  const out = path.join(outDir, 'cli.mjs');
  const probe = path.join(outDir, 'probe.mjs');

  it('imports the V8 tuning first, which runs before any package loads, and the bundle serves', async () => {
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build-bundle.ts', 'hosts/cli.ts', out], { cwd: root, stdio: 'pipe' });
    const text = fs.readFileSync(out, 'utf8');
    expect(text.match(/^import\s[^\n]*$/m)?.[0]).toBe('import "./v8-tuning.js";');
    expect(text).not.toContain('setFlagsFromString'); // one copy, beside the bundle
    expect(fs.readFileSync(path.join(outDir, 'v8-tuning.js'), 'utf8')).toContain('--semi-space-growth-factor=1');
    expect(fs.readFileSync(path.join(outDir, 'v8-tuning.js'), 'utf8')).toContain('--no-parallel-scavenge');
    // The server itself is the CommonJS body the stub runs through V8's code cache.
    const body = fs.readFileSync(bodyOf(out), 'utf8');

    fs.writeFileSync(probe, PROBE);
    const server = await start(out, probe, dataDir);
    const status = await fetch(`${server.url}/api/app/status`, { headers: { 'private-token': server.token } });
    expect(status.status).toBe(200);
    expect(server.stderr()).toMatch(/code cache: none/);
    const report = await server.stop();
    expect(report.seen).toEqual({ flags: '--semi-space-growth-factor=1', modules: 0, sqlite: false });
    // The probe would see these had they loaded first: the server did load them, later.
    expect(report.sqliteAtExit).toBe(true);
    // The other packages are bundled in (scripts/build-bundle.ts), evaluated after the tuning;
    // the CommonJS files the probe counts are the external ones.
    expect(report.modulesAtExit).toBeGreaterThanOrEqual(1);
    expect(body).toContain('buildServer');
    expect(body).not.toMatch(/require\("fastify"\)|from\s*"fastify"/);
    // What idle does not need is loaded at first use: the zip reader with the first archive listed.
    expect(report.zipAtExit).toBe(false);
    // and the API docs (@fastify/swagger, swagger-ui) with the first docs request (test/docs/*).
    expect(report.docsAtExit).toBe(false);
    // Nor node:http2, which fastify loads for `http2: true` servers only (scripts/launcher.js LAZY_FASTIFY_BUILTINS).
    expect(report.http2AtExit).toBe(false);
  }, 60_000);

  it('starts again from the code cache the first start saved, the tuning still first, and loads the API docs on demand', async () => {
    const server = await start(out, probe, dataDir);
    expect(server.stderr()).toMatch(/code cache: used/);
    // A package outside the bundle, loaded by a function compiled after the cache was read.
    const docs = await fetch(`${server.url}/api/docs/json`);
    expect(docs.status).toBe(200);
    expect(((await docs.json()) as { openapi: string }).openapi).toMatch(/^3\./);
    const report = await server.stop();
    expect(report.seen).toEqual({ flags: '--semi-space-growth-factor=1', modules: 0, sqlite: false });
    expect(report.docsAtExit).toBe(true);
  }, 60_000);
});
