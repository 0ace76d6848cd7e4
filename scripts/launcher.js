// Runs one of our TypeScript entry points (hosts/cli.ts, scripts/start.ts) on plain node, without a
// loader thread: the entry is bundled with esbuild into node_modules/.cache/jobscope/ when any of its
// sources changed since the last bundle (≈0.3 s; a stat per source file otherwise), then imported
// in this same process. Plain JS because it is what runs before any TypeScript can.
// Why not tsx: its loader runs in a worker thread with its own V8 heap, ~35 MiB of resident memory
// for the whole life of the server, and every module is transformed on each start.
//   node scripts/launcher.js <entry.ts> [args…]     (bin/jobscope.js calls runBundled directly)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CJS_BODY } from './code-cache.js';
import { applyV8Flags } from '../hosts/v8-flags.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Bump when the build options below change, so older bundles are rebuilt.
const FORMAT = 5;

/**
 * Packages left as imports from node_modules, here and in the packaged bundle (scripts/build-bundle.ts
 * imports this list). The rest are bundled in: node resolving, reading and compiling ~340 CommonJS
 * files one by one (stats and package.json reads, the ESM loader's CommonJS lexer, a compile per file)
 * was a third of the server's start CPU; bundled, the start to the listening line took 820-1281 ms of
 * CPU instead of 1394-1535 (3 alternating rounds, load ~22), and the freshness check stats ~800 files
 * instead of ~210, part of that figure. These stay outside because they read files beside themselves
 * through __dirname, which a bundled ESM file has not (SQLite's .wasm, Swagger UI's static files,
 * @fastify/swagger's and ioredis' own paths), or are Electron's, or load only on first use (pg and
 * ioredis with --database / --redis, yauzl with the first archive listed): nothing to gain at start,
 * and test/packaging's probe sees them stay unloaded.
 */
export const EXTERNAL_PACKAGES = ['electron', 'node-sqlite3-wasm', '@fastify/swagger', '@fastify/swagger-ui', 'ioredis', 'pg', 'yauzl'];

/**
 * fastify's lib/server.js loads node:http2 (and its HTTP/2 internals, four built-in modules) when it
 * is evaluated, for servers made with `http2: true`. Ours is a plain HTTP server: node's loaders
 * compiling and running those modules were part of the start that the bare node:http server does
 * not pay (~5 ms of CPU; the bundle loaded 183 built-in modules to its listening line, the bare
 * server 107). Bundled, http2 becomes a module loaded at its first property read, which a server
 * without `http2: true` never makes. (node:https and node:dns stay: the simulator's HTTP client
 * loads https, and with it TLS and dns, at start anyway.) A fastify whose line differs is bundled
 * as it is, eager as before: the replacement is exact or nothing.
 * @type {import('esbuild').Plugin}
 */
export const LAZY_FASTIFY_BUILTINS = {
  name: 'lazy-fastify-builtins',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]fastify[\\/]lib[\\/]server\.js$/ }, (args) => {
      const source = fs.readFileSync(args.path, 'utf8');
      const eager = "const http2 = require('node:http2')";
      if (!source.includes(eager)) return undefined;
      const lazy = "let http2Loaded; const http2 = new Proxy({}, { get: (_, key) => (http2Loaded ??= require('node:http2'))[key] })";
      return { contents: source.replace(eager, lazy), loader: 'js' };
    });
  },
};

/**
 * Node's modules that many of our files import, each taken into the CommonJS bundle once. esbuild
 * turns every `import fs from 'node:fs'` of an ES module into its own `__toESM(require('node:fs'))`,
 * a fresh object with a getter copied for each of the module's exports: 16 files import fs, crypto
 * and path, 10 os, ~3,000 property definitions at start (`__copyProps`, 3.5-13 ms of a start's
 * ~300 ms in four profiles). Our imports of these go through one module each instead, which
 * re-exports Node's; its own import of Node's module is left as it is. Only for the CommonJS
 * bundle: an ES module bundle keeps `import` statements, which Node links without copies.
 * @type {import('esbuild').Plugin}
 */
export const BUILTINS_ONCE = {
  name: 'builtins-once',
  setup(b) {
    b.onResolve({ filter: /^node:(fs|path|crypto|os)$/ }, (args) => {
      if (args.namespace === 'builtins-once' || /[\\/]node_modules[\\/]/.test(args.importer)) return undefined;
      return { path: args.path, namespace: 'builtins-once' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtins-once' }, (args) => ({
      contents: `export * from ${JSON.stringify(args.path)};\nexport { default } from ${JSON.stringify(args.path)};\n`,
      loader: 'js',
    }));
  },
};

/**
 * The server's Lua scripts are .lua files read by one module (server/redis/lua-scripts.ts) relative
 * to itself, which a bundle is not beside. This puts each file's text in place of its literal
 * `lua('…')` call when that module is bundled, so bundles and the packaged app carry the scripts
 * inside them. The files read are added to the result's watchFiles (a bundle is stale when one
 * changes: see luaRead). A call the pattern misses would read from beside the bundle and fail at
 * start, so every call is replaced or the build fails.
 * @type {import('esbuild').Plugin}
 */
export const LUA_INLINE = {
  name: 'lua-inline',
  setup(b) {
    b.onLoad({ filter: /[\\/]server[\\/]redis[\\/]lua-scripts\.ts$/ }, (args) => {
      const source = fs.readFileSync(args.path, 'utf8');
      const read = [];
      const contents = source.replace(/\blua\('([^']+\.lua)'\)/g, (_, rel) => {
        const file = path.resolve(path.dirname(args.path), rel);
        read.push(file);
        luaRead.add(file);
        return JSON.stringify(fs.readFileSync(file, 'utf8'));
      });
      const code = contents.replace(/^\s*\/\/.*$/gm, '').replace('function lua(', '');
      if (read.length === 0 || /\blua\(/.test(code)) {
        return { errors: [{ text: 'lua-scripts.ts: a lua() call is not a literal .lua path; the bundle could not carry its script' }] };
      }
      return { contents, loader: 'ts', watchFiles: read };
    });
  },
};

/** The .lua files LUA_INLINE read in the build running now (builds in a process run one at a time). */
const luaRead = new Set();

/**
 * The V8 tuning of hosts/v8-tuning.ts (read its comment for the why), applied here too because
 * the launcher's own bundling step already grows the young generation before the bundle's first module
 * runs: set early, the bin's idle RSS measured ~15 MiB lower. The same list (hosts/v8-flags.js),
 * so the two cannot drift apart; setting it twice is harmless.
 */
export function tuneV8Early() {
  applyV8Flags();
}

/**
 * Bundles `entry` (a path relative to the package root) when stale, then imports it.
 * process.argv[1] becomes the entry, so the entry's own argument parsing sees [node, entry, ...args].
 * @param {string} entry
 * @param {{ root?: string, cacheDir?: string, quiet?: boolean }} [opts]
 */
export async function runBundled(entry, opts = {}) {
  const base = opts.root ?? root;
  tuneV8Early();
  const bundle = await ensureBundle(entry, { root: base, cacheDir: opts.cacheDir ?? path.join(base, 'node_modules', '.cache', 'jobscope') }).catch((err) => {
    if (Array.isArray(err.errors) && err.errors.length > 0) {
      // esbuild printed where; tsx would only fail on the same line.
      process.stderr.write(`jobscope: ${entry} does not compile (see above); fix it and run again\n`);
      process.exit(1);
    }
    // A read-only install (e.g. a global one owned by root) or a missing esbuild: run the sources
    // through tsx instead: slower to start and heavier, but the same program.
    if (!opts.quiet) process.stderr.write(`jobscope: running the TypeScript sources through tsx (no bundle: ${err.message.split('\n')[0]})\n`);
    return undefined;
  });
  process.argv[1] = path.join(base, entry);
  if (bundle) return import(pathToFileURL(bundle).href);
  const { register } = await import('tsx/esm/api');
  register();
  return import(pathToFileURL(path.join(base, entry)).href);
}

/**
 * The path of a file to import that runs the bundle, rebuilt first when it is missing or any recorded
 * source changed. The bundle is CommonJS run by a small ES module beside it through scripts/code-cache.js
 * (V8's code cache: the functions a start compiled are not compiled again at the next); an entry with
 * top-level await, which CommonJS cannot hold (scripts/start.ts), is bundled as an ES module, uncached.
 * The stub's default export is the entry's exports (CommonJS: module.exports).
 * @param {string} entry
 * @param {{ root: string, cacheDir: string }} where
 * @returns {Promise<string>}
 */
export async function ensureBundle(entry, { root: base, cacheDir }) {
  const name = entry.replace(/\.[cm]?ts$/, '').replace(/[^A-Za-z0-9_-]+/g, '_');
  const out = path.join(cacheDir, `${name}.mjs`);
  const manifestFile = path.join(cacheDir, `${name}.json`);
  if (isFresh(manifestFile, out, base)) return out;
  // One build at a time in a process, and one per bundle: each build ends with esbuild.stop(),
  // which would cut off another build still running on the same esbuild service (its promise never
  // settled). Callers asking for a bundle being built share that build.
  let building = inProcess.get(out);
  if (!building) {
    building = lastBuild.then(() => buildBundle(entry, name, out, manifestFile, base, cacheDir)).finally(() => inProcess.delete(out));
    inProcess.set(out, building);
    lastBuild = building.catch(() => undefined);
  }
  return building;
}

/** @type {Map<string, Promise<string>>} the bundles this process is building, by output file */
const inProcess = new Map();
/** @type {Promise<unknown>} the build this process started last (the next one waits for it) */
let lastBuild = Promise.resolve();

/** @param {string} entry @param {string} name @param {string} out @param {string} manifestFile @param {string} base @param {string} cacheDir */
async function buildBundle(entry, name, out, manifestFile, base, cacheDir) {
  const esbuild = await import('esbuild');
  fs.mkdirSync(cacheDir, { recursive: true });
  const started = Date.now();
  const tmp = path.join(cacheDir, `.${name}.${process.pid}.tmp`);
  const options = (format, outfile) => ({
    absWorkingDir: base,
    entryPoints: [entry],
    outfile,
    write: false,
    bundle: true,
    platform: 'node',
    format,
    target: 'node20',
    external: EXTERNAL_PACKAGES,
    plugins: format === 'cjs' ? [LAZY_FASTIFY_BUILTINS, BUILTINS_ONCE, LUA_INLINE] : [LAZY_FASTIFY_BUILTINS, LUA_INLINE],
    // Bundled CommonJS packages call require() for node's modules: an ES module has none of its own
    // (the CommonJS bundle gets node's from its wrapper), nor import.meta.url (given as a parameter).
    ...(format === 'esm'
      ? { banner: { js: 'import { createRequire as __bundleCreateRequire } from "node:module";\nconst require = __bundleCreateRequire(import.meta.url);' } }
      : CJS_BODY),
    // V8 keeps the whole source in the heap for lazy compiling: minified (names kept) it is 1.9 MB,
    // not 2.9, ~3.5 MiB less heap at idle. A stack trace names the bundle's lines; run with
    // NODE_OPTIONS=--enable-source-maps to have them named in the TypeScript sources.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'silent',
  });
  luaRead.clear();
  try {
    const body = path.join(cacheDir, `${name}.cjs`);
    let result;
    try {
      result = await esbuild.build(options('cjs', body));
      const runner = path.relative(cacheDir, path.join(root, 'scripts', 'code-cache.js')).split(path.sep).join('/');
      const stub = `import { fileURLToPath } from "node:url";\nimport { runWithCodeCache } from ${JSON.stringify(runner.startsWith('.') ? runner : `./${runner}`)};\nexport default runWithCodeCache(fileURLToPath(new URL(${JSON.stringify(`./${name}.cjs`)}, import.meta.url)));\n`;
      result.outputFiles.push({ path: out, contents: Buffer.from(stub) });
      result.metafile.inputs[path.relative(base, path.join(root, 'scripts', 'code-cache.js'))] = {};
      // How the bundle is built (the plugins above) is a source of it too.
      result.metafile.inputs[path.relative(base, fileURLToPath(import.meta.url))] = {};
      fs.rmSync(`${out}.map`, { force: true });
    } catch (err) {
      if (!(err.errors ?? []).some((e) => /top-level await/i.test(e.text))) throw err;
      result = await esbuild.build(options('esm', out));
      for (const f of [body, `${body}.map`]) fs.rmSync(f, { force: true });
    }
    // Written beside and renamed into place: a start running at the same time never imports half a file.
    for (const file of result.outputFiles) {
      const part = `${tmp}${path.basename(file.path).slice(name.length)}`;
      fs.writeFileSync(part, file.contents);
      fs.renameSync(part, file.path);
    }
    // A module a plugin made in a namespace of its own (BUILTINS_ONCE's) is no file to watch: esbuild
    // names it `namespace:path`, a file by its path alone.
    const inputs = Object.keys(result.metafile.inputs)
      .filter((f) => !/^[a-z][\w-]+:/i.test(f))
      .map((f) => path.resolve(base, f))
      .concat([...luaRead]);
    const stats = inputs.map((f) => stamp(f));
    // A source saved while esbuild was reading it may not be in this bundle: leave no manifest, so the next start rebuilds.
    if (stats.every((s) => s !== undefined && s[0] < started)) {
      fs.writeFileSync(manifestFile, JSON.stringify({ format: FORMAT, esbuild: esbuild.version, inputs: Object.fromEntries(inputs.map((f, i) => [path.relative(base, f), stats[i]])) }));
    } else {
      fs.rmSync(manifestFile, { force: true });
    }
  } catch (err) {
    // esbuild's own report, printed as its logLevel 'error' used to.
    if (Array.isArray(err.errors) && err.errors.length > 0) {
      const text = await esbuild.formatMessages(err.errors, { kind: 'error' });
      process.stderr.write(text.join(''));
    }
    throw err;
  } finally {
    for (const f of fs.readdirSync(cacheDir)) if (f.startsWith(`.${name}.${process.pid}.tmp`)) fs.rmSync(path.join(cacheDir, f), { force: true });
    // esbuild keeps a service process alive otherwise; the server must not carry it.
    await esbuild.stop();
  }
  return out;
}

/** @returns {[number, number] | undefined} mtime (ms) and size */
function stamp(file) {
  try {
    const s = fs.statSync(file);
    return [s.mtimeMs, s.size];
  } catch {
    return undefined;
  }
}

function isFresh(manifestFile, out, base) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch {
    return false;
  }
  if (manifest.format !== FORMAT || !fs.existsSync(out)) return false;
  for (const [file, recorded] of Object.entries(manifest.inputs)) {
    const now = stamp(path.resolve(base, file));
    if (!now || now[0] !== recorded[0] || now[1] !== recorded[1]) return false;
  }
  return true;
}


if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const entry = process.argv[2];
  if (!entry) {
    process.stderr.write('usage: node scripts/launcher.js <entry.ts> [args…]\n');
    process.exit(2);
  }
  process.argv.splice(2, 1);
  await runBundled(entry);
}
