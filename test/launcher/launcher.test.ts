// The plain-JS launcher behind `jobscope` / `npm run serve`: it bundles a TypeScript entry into a
// cache file, reuses it while no source changed, rebuilds when one did, and the real CLI served
// through it answers over HTTP.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBundle } from '../../scripts/launcher.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-launcher-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const importFresh = async (file: string) => (await import(`${pathToFileURL(file).href}?v=${fs.statSync(file).mtimeMs}`)) as { value?: string; default?: { value: string } };
/** The stub's default export is the CommonJS bundle's module.exports (scripts/code-cache.js). */
const valueOf = async (file: string) => (await importFresh(file)).default!.value;

describe('launcher bundle cache', () => {
  const src = path.join(work, 'src');
  const cacheDir = path.join(work, 'cache');
  fs.mkdirSync(path.join(src, 'lib'), { recursive: true });
  // A default import of a node module: the CommonJS bundle takes it through BUILTINS_ONCE's module.
  fs.writeFileSync(path.join(src, 'entry.ts'), "import path from 'node:path';\nimport { part } from './lib/part.ts';\nexport const value: string = `entry+${part}`;\nexport const joined = path.join('a', 'b');\n");
  fs.writeFileSync(path.join(src, 'lib/part.ts'), "export const part = 'one';\n");

  it('bundles the entry with its imports, then reuses the bundle while nothing changed', async () => {
    const out = await ensureBundle('src/entry.ts', { root: work, cacheDir });
    expect(await valueOf(out)).toBe('entry+one');
    expect(((await importFresh(out)).default as unknown as { joined: string }).joined).toBe(path.join('a', 'b'));
    expect(fs.readFileSync(path.join(cacheDir, 'src_entry.cjs'), 'utf8')).toContain('entry+');
    // The sources, the code-cache runner the stub imports and the launcher that says how to build
    // (a change to either rebuilds); not the modules a plugin made, which are no files (recorded,
    // they left no manifest, and every start rebuilt the bundle).
    const manifest = JSON.parse(fs.readFileSync(path.join(cacheDir, 'src_entry.json'), 'utf8')) as { inputs: Record<string, unknown> };
    const runner = Object.keys(manifest.inputs).filter((f) => f.endsWith('scripts/code-cache.js') || f.endsWith('scripts/launcher.js'));
    expect(runner).toHaveLength(2);
    expect(Object.keys(manifest.inputs).filter((f) => !runner.includes(f)).sort()).toEqual(['src/entry.ts', 'src/lib/part.ts']);
    const before = fs.statSync(out).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    expect(await ensureBundle('src/entry.ts', { root: work, cacheDir })).toBe(out);
    expect(fs.statSync(out).mtimeMs).toBe(before);
  });

  it('rebuilds when an imported source changes, and when a new one is imported', async () => {
    fs.writeFileSync(path.join(src, 'lib/part.ts'), "export const part = 'two!';\n");
    const out = await ensureBundle('src/entry.ts', { root: work, cacheDir });
    expect(await valueOf(out)).toBe('entry+two!');
    fs.writeFileSync(path.join(src, 'lib/extra.ts'), "export const extra = 'three';\n");
    fs.writeFileSync(path.join(src, 'lib/part.ts'), "import { extra } from './extra.ts';\nexport const part = `two+${extra}`;\n");
    expect(await valueOf(await ensureBundle('src/entry.ts', { root: work, cacheDir }))).toBe('entry+two+three');
    fs.writeFileSync(path.join(src, 'lib/extra.ts'), "export const extra = 'four';\n");
    expect(await valueOf(await ensureBundle('src/entry.ts', { root: work, cacheDir }))).toBe('entry+two+four');
    expect(fs.readdirSync(cacheDir).filter((f) => f.endsWith('.tmp') || f.includes('.tmp.'))).toEqual([]);
  });

  it('builds once for two callers in one process that find the bundle stale at once, and two bundles asked for at once one after the other', async () => {
    // Each build ends with esbuild.stop(): a second build in flight on the same service never settled.
    fs.writeFileSync(path.join(src, 'lib/extra.ts'), "export const extra = 'five';\n");
    const [a, b] = await Promise.all([ensureBundle('src/entry.ts', { root: work, cacheDir }), ensureBundle('src/entry.ts', { root: work, cacheDir })]);
    expect(b).toBe(a);
    expect(await valueOf(a)).toBe('entry+two+five');
    // Two different bundles at once: one after the other, both built.
    fs.writeFileSync(path.join(src, 'lib/extra.ts'), "export const extra = 'six';\n");
    fs.writeFileSync(path.join(src, 'other.ts'), "import { part } from './lib/part.ts';\nexport const value: string = `other+${part}`;\n");
    const [c, d] = await Promise.all([ensureBundle('src/entry.ts', { root: work, cacheDir }), ensureBundle('src/other.ts', { root: work, cacheDir })]);
    expect([await valueOf(c), await valueOf(d)]).toEqual(['entry+two+six', 'other+two+six']);
  });

  it('bundles an entry with top-level await as an ES module (CommonJS cannot hold it)', async () => {
    fs.writeFileSync(path.join(src, 'tla.ts'), "import { part } from './lib/part.ts';\nexport const value: string = await Promise.resolve(`tla+${part}`);\n");
    const out = await ensureBundle('src/tla.ts', { root: work, cacheDir });
    expect((await importFresh(out)).value).toBe('tla+two+six');
    expect(fs.existsSync(path.join(cacheDir, 'src_tla.cjs'))).toBe(false);
  });

  it('reports a source that does not compile instead of running an old bundle', async () => {
    fs.writeFileSync(path.join(src, 'lib/extra.ts'), 'export const extra = ;\n');
    await expect(ensureBundle('src/entry.ts', { root: work, cacheDir })).rejects.toThrow(/extra\.ts/);
  });
});

describe('bin/jobscope.js serve', () => {
  it('starts the real server from the bundle and answers', async () => {
    const dataDir = path.join(work, 'data');
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/jobscope.js'), 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'error'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          const m = /Jobscope listening on (http:\/\/\S+)/.exec(d.toString());
          if (m) resolve(m[1]!);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
      });
      expect(stderr).not.toMatch(/through tsx/);
      const res = await fetch(`${url}/ci/api/v1/builds/register.json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token":"nope"}' });
      expect(res.status).toBe(403);
      // The API docs' packages stay outside the bundle and load on this first request.
      expect((await fetch(`${url}/api/docs/json`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
    }
  }, 30_000);
});
