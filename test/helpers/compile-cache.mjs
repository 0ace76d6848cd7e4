// Preloaded (`node --import`) into the `jobscope` child processes the tests start (cli-process.ts):
// V8's code cache for the npm packages' CommonJS modules, kept in node_modules/.cache/jobscope-test/v8.
// A child start spends much of its CPU parsing and compiling fastify, ajv, pino and their kin, and the
// suite starts ~40 of them; node 20 has no compile cache of its own (module.enableCompileCache is 22).
// A `jobscope serve` start to "listening" and SIGTERM, 5 alternating rounds at load ~30 (user+sys of
// /usr/bin/time): 2.41 s of CPU without, 2.02 s with.
// A module's cache is keyed by its path and content (and node's version), so a changed package is
// compiled afresh; a cache V8 refuses (other flags) is rewritten. Only node_modules: our own code is
// in the bundle, an ES module, which node 20 cannot feed cached data. Anything that fails here falls
// back to node's own loading: the cache can only make a start cheaper, never change what runs.
import v8 from 'node:v8';
import Module from 'node:module';
import vm from 'node:vm';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

// V8 accepts cached data only under the flags it was made with. server/hosts/v8-tuning.ts sets these
// when the bundle's body runs, which is after the packages it imports have compiled; set here first
// (as scripts/launcher.js does for the bin), both the making and the using run under the same flags.
// Keep them in step with v8-tuning.ts (a mismatch costs only the cache: V8 rejects it, it is rewritten).
v8.setFlagsFromString('--semi-space-growth-factor=1');
v8.setFlagsFromString('--wasm-num-compilation-tasks=1');
v8.setFlagsFromString('--wasm-tiering-budget=180000000');

const dir = path.resolve(import.meta.dirname, '../../node_modules/.cache/jobscope-test/v8');
const inNodeModules = `${path.sep}node_modules${path.sep}`;
const compile = Module.prototype._compile;

Module.prototype._compile = function (content, filename) {
  if (!filename.includes(inNodeModules)) return compile.call(this, content, filename);
  const file = path.join(dir, crypto.createHash('sha1').update(`${process.version}\0${filename}\0`).update(content).digest('hex'));
  let cachedData;
  try {
    cachedData = fs.readFileSync(file);
  } catch {
    cachedData = undefined;
  }
  let script;
  try {
    script = new vm.Script(Module.wrap(content), { filename, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  } catch {
    // ES module syntax in a .js file that is require()d: node's own path knows what to do with it.
    return compile.call(this, content, filename);
  }
  const wrapper = script.runInThisContext({ displayErrors: true });
  // The module's own require, as node's loader makes it (arrows: `this` is the module).
  const require = (id) => this.require(id);
  require.resolve = (request, options) => Module._resolveFilename(request, this, false, options);
  require.resolve.paths = (request) => Module._resolveLookupPaths(request, this);
  require.main = process.mainModule;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  const result = wrapper.call(this.exports, this.exports, require, this, filename, path.dirname(filename));
  // Made once the module has run: the functions its top level called are compiled by then and cached too.
  if (cachedData === undefined || script.cachedDataRejected) save(file, script);
  return result;
};

function save(file, script) {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(dir, { recursive: true });
    // Written beside and renamed: a child starting at the same time reads a whole cache or none.
    fs.writeFileSync(tmp, script.createCachedData());
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}
