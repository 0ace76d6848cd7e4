// Runs a CommonJS bundle with V8's code cache, so a start does not parse and compile the bundle's
// functions again. Node 20 has no compile cache (module.enableCompileCache came in 22.1) and none
// for ES modules at all, but vm.Script takes `cachedData`: the bytecode of every function the last
// start compiled, made by createCachedData() once that start had run. Loading the 1.9 MB server
// bundle was a third of its start CPU (compileSourceTextModule alone ~12 %, the rest lazy compiles
// of the functions start-up runs); bench/startup.ts has the before/after.
// Why not the npm package v8-compile-cache: it hooks require() for CommonJS files one by one and
// stores what V8 compiled eagerly at parse time (produceCachedData), before anything ran, which
// leaves out the lazily compiled functions that are most of the cost here; this is one file, one cache.
// Plain JS: the launcher imports it before any TypeScript can run, and build-bundle.ts bundles it
// into the packaged stub.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import Module, { createRequire } from 'node:module';
import { StringDecoder } from 'node:string_decoder';
import { pathToFileURL } from 'node:url';

/** Wrapper parameters: what a CommonJS file has, plus import.meta.url (esbuild's `define` maps it here). */
export const BUNDLE_URL = '__bundleUrl';

/**
 * esbuild options for a bundle runWithCodeCache can run: CommonJS, wrapped in the file itself in the
 * function a CommonJS module is wrapped in (plus import.meta.url as a parameter), so the source read
 * is the script compiled, not a second 1.9 MB string made by joining it to a wrapper.
 * import() of the packages left outside the bundle becomes require(): a function that V8 compiles
 * lazily inside a script made from cached data has lost the script's dynamic-import callback in
 * Node 20 (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING on the first /api/docs request), and vm's
 * main-context loader is experimental there (a warning on stderr). Those packages are CommonJS;
 * esbuild's interop gives `default` = module.exports, as node's ESM loader does.
 */
export const CJS_BODY = {
  format: 'cjs',
  define: { 'import.meta.url': BUNDLE_URL },
  supported: { 'dynamic-import': false },
  banner: { js: `(function (exports, require, module, __filename, __dirname, ${BUNDLE_URL}) {` },
  footer: { js: '})' },
};

/**
 * Evaluates `file` (a bundle built with CJS_BODY's options) and returns
 * its module.exports. The cache lives in `cacheDir` (default: beside the bundle), named by a digest of
 * the source and V8's version: V8 itself checks only the source's length and its own flags, and
 * rejects data made under other flags (`cachedDataRejected`), in which case a new cache is written.
 * A missing, unreadable or unwritable cache only costs the compile it would have saved.
 * @param {string} file
 * JOBSCOPE_CODE_CACHE_SAVE_MS sets how long after the evaluation the cache is made (tests: 0).
 * @param {{ cacheDir?: string, saveAfterMs?: number, onStatus?: (status: 'none' | 'used' | 'rejected') => void }} [opts]
 */
export function runWithCodeCache(file, opts = {}) {
  const module = { exports: {} };
  const run = (fn) => fn.call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file), pathToFileURL(file).href);
  // node maps stack traces through a bundle's source map (--enable-source-maps) only for files its
  // own loaders compiled, never for a vm.Script: debugging is worth the compile, so no cache then.
  // The prefix sits on the wrapper's line, so the bundle's lines stay where the map says they are.
  if (process.sourceMapsEnabled) {
    const source = fs.readFileSync(file, 'utf8');
    const loaded = new Module(file);
    loaded.filename = file;
    loaded.paths = Module._nodeModulePaths(path.dirname(file));
    loaded._compile(`module.exports = ${source}`, file);
    run(loaded.exports);
    return module.exports;
  }
  const dir = opts.cacheDir ?? path.dirname(file);
  const hash = crypto.createHash('sha256');
  const source = readInPieces(file, hash);
  const digest = hash.update(`\0${process.versions.v8}\0${process.arch}`).digest('hex').slice(0, 20);
  const cacheFile = path.join(dir, `${path.basename(file)}.${digest}.v8cache`);
  let cachedData;
  try {
    cachedData = readOutsideMalloc(cacheFile);
  } catch {
    /* first start, or no cache dir: compile from source */
  }
  const script = new vm.Script(source, { filename: file, cachedData });
  const used = cachedData !== undefined && !script.cachedDataRejected;
  const status = cachedData === undefined ? 'none' : used ? 'used' : 'rejected';
  opts.onStatus?.(status);
  if (process.env.JOBSCOPE_CODE_CACHE_DEBUG) process.stderr.write(`code cache: ${status} (${cacheFile})\n`);
  cachedData = undefined;
  run(script.runInThisContext());
  // Made once the start has run (its functions compiled), and while the V8 tuning's start-up flags
  // still hold (hosts/v8-flags.js): V8 keys the data by the flags at the time it is made, so a cache
  // made after the young generation's growth came back is rejected by every start that reads it.
  const envMs = Number(process.env.JOBSCOPE_CODE_CACHE_SAVE_MS || NaN);
  if (!used) {
    const release = holdStartUp();
    setTimeout(() => {
      saveCache(script, cacheFile);
      release();
    }, opts.saveAfterMs ?? (Number.isFinite(envMs) ? envMs : 3000)).unref();
  }
  return module.exports;
}

/**
 * The V8 tuning's start-up hold (hosts/v8-flags.js holdStartUp), found on the global object where the
 * tuning keeps its state, not imported: the packaged stub bundles this file, and an import would put
 * a second copy of the flags' code into it. A no-op when no tuning ran in this process.
 * @returns {() => void} ends the hold
 */
function holdStartUp() {
  return globalThis[Symbol.for('jobscope.v8-start-up-hold')]?.hold() ?? (() => {});
}

/**
 * Why the bundle and its cache are not simply read with fs.readFileSync: glibc's malloc raises its
 * mmap threshold to the size of the largest block it has mmapped and freed (up to 32 MiB), and its
 * trim threshold to twice that, for the rest of the process. A 1.9 MB source read whole (node grows
 * its buffer 256 kB -> 2 MB), hashed as a string (node encodes it into a 5.8 MB buffer) and a 1.8 MB
 * cache Buffer freed after use took the trim threshold to ~11.6 MB, and every thread's malloc arena
 * then kept up to that much freed memory resident for good (strace: the munmap of those blocks;
 * the same start with MALLOC_MMAP_THRESHOLD_ fixed in the environment was ~12 MiB lighter at idle).
 * So the source is read and hashed in 64 kB pieces (one small buffer, reused), and the cache goes
 * into a WebAssembly.Memory, which V8 maps and unmaps itself, outside malloc.
 * @param {string} file
 * @param {import('node:crypto').Hash} hash fed the file's bytes
 */
function readInPieces(file, hash) {
  const fd = fs.openSync(file, 'r');
  try {
    const piece = Buffer.allocUnsafeSlow(64 * 1024);
    const decoder = new StringDecoder('utf8');
    const parts = [];
    for (let n; (n = fs.readSync(fd, piece, 0, piece.length, null)) > 0; ) {
      hash.update(piece.subarray(0, n));
      parts.push(decoder.write(piece.subarray(0, n)));
    }
    parts.push(decoder.end());
    return parts.join('');
  } finally {
    fs.closeSync(fd);
  }
}

/** @param {string} file @returns {Uint8Array} the whole file, in memory that is not malloc's (see readInPieces) */
function readOutsideMalloc(file) {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const view = new Uint8Array(new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(size / 65536)) }).buffer, 0, size);
    for (let at = 0, n; at < size && (n = fs.readSync(fd, view, at, size - at, at)) > 0; ) at += n;
    return view;
  } finally {
    fs.closeSync(fd);
  }
}

/** Written beside and renamed into place: a start running at the same time never reads half a file. */
function saveCache(script, cacheFile) {
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  try {
    const data = script.createCachedData();
    fs.mkdirSync(path.dirname(cacheFile), { recursive: true });
    fs.writeFileSync(tmp, data);
    fs.renameSync(tmp, cacheFile);
    // Caches of older builds of the same bundle are dead weight: one per bundle name is kept.
    const prefix = `${path.basename(cacheFile).split('.').slice(0, -2).join('.')}.`;
    for (const f of fs.readdirSync(path.dirname(cacheFile))) {
      if (f.startsWith(prefix) && f.endsWith('.v8cache') && f !== path.basename(cacheFile)) fs.rmSync(path.join(path.dirname(cacheFile), f), { force: true });
    }
  } catch {
    // A read-only install (the packaged app's asar, a global install owned by root): no cache.
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      /* nothing was written */
    }
  }
}
