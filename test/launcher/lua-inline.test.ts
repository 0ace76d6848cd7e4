// The Lua scripts are .lua files read by server/redis/lua-scripts.ts relative to itself; a bundle is
// not beside them. LUA_INLINE (scripts/launcher.js, used by every esbuild build of the server) puts
// their text into the bundle: it must run with the files gone, and rebuild when one changes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBundle } from '../../scripts/launcher.js';
import { JOB_SCRIPTS, SIDEKIQ_READ_TEMPLATE } from '../../server/redis/lua-scripts.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-lua-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const LOADER = 'server/redis/lua-scripts.ts';
const SCRIPT_DIRS = ['server/store/redis/scripts', 'server/sidekiq/scripts'];

type Loaded = { JOB_SCRIPTS: typeof JOB_SCRIPTS; SIDEKIQ_READ_TEMPLATE: string };
const load = async (file: string) => ((await import(`${pathToFileURL(file).href}?v=${fs.statSync(file).mtimeMs}`)) as { default: Loaded }).default;

describe('Lua scripts in a bundle', () => {
  for (const f of [LOADER, ...SCRIPT_DIRS]) fs.cpSync(path.join(ROOT, f), path.join(work, f), { recursive: true });
  const cacheDir = path.join(work, 'cache');

  it('carries every script inside the bundle, the same text the sources read', async () => {
    const out = await ensureBundle(LOADER, { root: work, cacheDir });
    const luaFiles = SCRIPT_DIRS.flatMap((d) => fs.readdirSync(path.join(work, d)).map((f) => `${d}/${f}`));
    const manifest = JSON.parse(fs.readFileSync(path.join(cacheDir, 'server_redis_lua-scripts.json'), 'utf8')) as { inputs: Record<string, unknown> };
    expect(Object.keys(manifest.inputs).filter((f) => f.endsWith('.lua')).sort()).toEqual(luaFiles.sort());
    for (const d of SCRIPT_DIRS) fs.rmSync(path.join(work, d), { recursive: true });
    const bundled = await load(out);
    expect(bundled.SIDEKIQ_READ_TEMPLATE).toBe(SIDEKIQ_READ_TEMPLATE);
    for (const [name, def] of Object.entries(JOB_SCRIPTS)) expect(bundled.JOB_SCRIPTS[name as keyof typeof JOB_SCRIPTS]).toEqual(def);
  });

  it('rebuilds when a script changes', async () => {
    for (const d of SCRIPT_DIRS) fs.cpSync(path.join(ROOT, d), path.join(work, d), { recursive: true });
    const first = await ensureBundle(LOADER, { root: work, cacheDir });
    const fetchLua = path.join(work, 'server/store/redis/scripts/fetch.lua');
    fs.appendFileSync(fetchLua, '-- changed\n');
    const again = await ensureBundle(LOADER, { root: work, cacheDir });
    expect(again).toBe(first);
    expect((await load(again)).JOB_SCRIPTS.jsFetch.lua).toContain('-- changed');
  });
});
