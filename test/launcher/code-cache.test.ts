// scripts/code-cache.js: a CommonJS bundle run through V8's code cache. The cache is made after a run,
// used by the next, refused (and made again) when it does not fit, and never used for another source.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { CJS_BODY } from '../../scripts/code-cache.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-code-cache-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

type Status = 'none' | 'used' | 'rejected';
const caches = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith('.v8cache'));

const RUNNER = path.resolve(import.meta.dirname, '../../scripts/code-cache.js');

/**
 * Runs the bundle once in a fresh node process (in this one V8's own in-memory compile cache would
 * answer for the file's), the cache saved at once (saveAfterMs 0) before it exits.
 */
function runOnce(file: string, cacheDir?: string): { exports: Record<string, unknown>; status: Status } {
  const script = `import { runWithCodeCache } from ${JSON.stringify(pathToFileURL(RUNNER).href)};
let status;
const exports = runWithCodeCache(${JSON.stringify(file)}, { cacheDir: ${JSON.stringify(cacheDir)}, saveAfterMs: 0, onStatus: (s) => (status = s) });
setTimeout(() => console.log(JSON.stringify({ status, exports: { ...exports, twice: typeof exports.twice === 'function' ? exports.twice(21) : undefined } })), 1);`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { exports: Record<string, unknown>; status: Status };
}

async function bundle(name: string, source: string): Promise<string> {
  const dir = path.join(work, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'entry.ts'), source);
  const out = path.join(dir, 'entry.cjs');
  await build({ entryPoints: [path.join(dir, 'entry.ts')], outfile: out, bundle: true, platform: 'node', logLevel: 'silent', ...CJS_BODY });
  return out;
}

describe('runWithCodeCache', () => {
  it('compiles from source first, then runs from the cache the first run made, with the same result', async () => {
    const file = await bundle('a', "import path from 'node:path';\nexport const where = path.basename(new URL(import.meta.url).pathname);\nexport const twice = (n: number) => n * 2;\n");
    const first = runOnce(file);
    expect(first.status).toBe('none');
    expect(first.exports.where).toBe('entry.cjs');
    expect(caches(path.dirname(file))).toHaveLength(1);
    const second = runOnce(file);
    expect(second.status).toBe('used');
    expect(second.exports.twice).toBe(42);
    expect(second.exports.where).toBe('entry.cjs');
  });

  it('refuses a damaged cache, still runs the bundle, and writes a good one', async () => {
    const file = await bundle('b', 'export const value = [1, 2, 3].map((n) => n + 1).join(",");\n');
    runOnce(file);
    const [cache] = caches(path.dirname(file));
    const data = fs.readFileSync(path.join(path.dirname(file), cache!));
    data.fill(7, 16, 64);
    fs.writeFileSync(path.join(path.dirname(file), cache!), data);
    const damaged = runOnce(file);
    expect(damaged.status).toBe('rejected');
    expect(damaged.exports.value).toBe('2,3,4');
    expect((runOnce(file)).status).toBe('used');
  });

  it('never uses the cache of another source of the same length, and drops the old cache', async () => {
    // V8 checks only the length: a stale cache for same-length text would run the old functions.
    const file = await bundle('c', 'export const word = "alpha";\n');
    expect((runOnce(file)).exports.word).toBe('alpha');
    const old = caches(path.dirname(file));
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, text.replace('"alpha"', '"omega"'));
    expect(fs.readFileSync(file, 'utf8')).toHaveLength(text.length);
    const changed = runOnce(file);
    expect(changed.status).toBe('none');
    expect(changed.exports.word).toBe('omega');
    expect(caches(path.dirname(file))).toHaveLength(1);
    expect(caches(path.dirname(file))).not.toEqual(old);
  });

  it('names the TypeScript source in stack traces under --enable-source-maps (node maps no vm.Script)', async () => {
    const dir = path.join(work, 'maps');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'entry.ts'), 'export function boom(): never {\n  // the throw is on line 3\n  throw new Error("boom");\n}\nboom();\n');
    const file = path.join(dir, 'entry.cjs');
    await build({ entryPoints: [path.join(dir, 'entry.ts')], outfile: file, bundle: true, platform: 'node', logLevel: 'silent', sourcemap: 'linked', ...CJS_BODY });
    const script = `import { runWithCodeCache } from ${JSON.stringify(pathToFileURL(RUNNER).href)};\nrunWithCodeCache(${JSON.stringify(file)});`;
    const mapped = spawnSync(process.execPath, ['--enable-source-maps', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(mapped.stderr).toContain(`${path.join(dir, 'entry.ts')}:3:`);
    const plain = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(plain.stderr).toContain(`${file}:`);
  });

  it('makes a first start\'s cache under the start-up flags, though start-up ended before the save', async () => {
    // V8 keys the data by its flags when it is made: made after the young generation's growth came
    // back (hosts/v8-flags.js), the next start, under the start-up flags again, would reject it.
    const file = await bundle('e', 'export const twice = (n: number) => n * 2;\n');
    const flags = pathToFileURL(path.resolve(import.meta.dirname, '../../hosts/v8-flags.js')).href;
    const start = (saveAfterMs: number) => `import { applyV8Flags, endStartUp } from ${JSON.stringify(flags)};
import { runWithCodeCache } from ${JSON.stringify(pathToFileURL(RUNNER).href)};
applyV8Flags();
let status;
runWithCodeCache(${JSON.stringify(file)}, { saveAfterMs: ${saveAfterMs}, onStatus: (s) => (status = s) });
endStartUp();
setTimeout(() => console.log(status), ${saveAfterMs} + 50);`;
    expect(execFileSync(process.execPath, ['--input-type=module', '-e', start(100)], { encoding: 'utf8' }).trim()).toBe('none');
    expect(caches(path.dirname(file))).toHaveLength(1);
    expect(execFileSync(process.execPath, ['--input-type=module', '-e', start(0)], { encoding: 'utf8' }).trim()).toBe('used');
  });

  it('runs without a cache where none can be written', async () => {
    const file = await bundle('d', 'export const ok = true;\n');
    const run = runOnce(file, path.join(file, 'not-a-dir'));
    expect(run.status).toBe('none');
    expect(run.exports.ok).toBe(true);
    expect(caches(path.dirname(file))).toEqual([]);
  });
});
