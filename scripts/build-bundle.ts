// Bundles a host entry (electron/main.ts, hosts/cli.ts) as the packaged app ships it: one ESM file
// with the npm packages in it (but those in EXTERNAL_PACKAGES), and hosts/v8-tuning.ts as a
// file of its own beside it, imported first. From the command line (the bundle run by plain node:
// benches, test/packaging) the bundle is CommonJS run by a stub through V8's code cache (see bundleHost).
//   node --import tsx scripts/build-bundle.ts <entry.ts> <out.js>   (bench/footprint.ts runs it so)
//
// Why the tuning is a file of its own: ESM evaluates a module's imports before its body, and esbuild
// hoists every npm package the bundle imports to the top of the one file. Bundled in, the tuning ran
// after fastify, swagger, ajv and SQLite's WebAssembly (~450 modules) had loaded, too late: the young
// generation had already doubled to 2 × 8 MiB and the WebAssembly had compiled on several threads.
// As the bundle's first import it runs before any of them, as scripts/launcher.js makes it run for
// the `jobscope` bin (bench/footprint.ts, bundled idle: ~12 MiB of V8 heap pages and a few MiB of
// malloc arenas less).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
// The packages left outside the bundle: one list, in launcher.js (plain JS, as it runs before any
// TypeScript can), for the bin's bundle and this one; its comment says why each stays outside.
import { BUILTINS_ONCE, EXTERNAL_PACKAGES, LAZY_FASTIFY_BUILTINS, LUA_INLINE } from './launcher.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TUNING_FILE = 'v8-tuning.js';
import { CJS_BODY } from './code-cache.js';

/** Bundled CommonJS packages call require() for node's modules: an ESM file has none of its own. */
const REQUIRE_BANNER = 'import { createRequire as __bundleCreateRequire } from "node:module";\nconst require = __bundleCreateRequire(import.meta.url);';
const TUNING_SOURCE = 'hosts/v8-tuning.ts';

/** Resolves the host entries' `import '…/hosts/v8-tuning.ts'` to the file written beside the bundle. */
/** With the code cache the body imports nothing: the stub imports the tuning before it runs the body. */
const tuningInStub: Plugin = {
  name: 'v8-tuning-in-stub',
  setup(b) {
    b.onResolve({ filter: /(^|\/)hosts\/v8-tuning(\.ts)?$/ }, (args) => {
      if (path.resolve(args.resolveDir, args.path.endsWith('.ts') ? args.path : `${args.path}.ts`) !== path.join(root, TUNING_SOURCE)) return undefined;
      return { path: TUNING_SOURCE, namespace: 'empty' };
    });
    b.onLoad({ filter: /.*/, namespace: 'empty' }, () => ({ contents: '', loader: 'js' }));
  },
};

const tuningBeside: Plugin = {
  name: 'v8-tuning-beside',
  setup(b) {
    b.onResolve({ filter: /(^|\/)hosts\/v8-tuning(\.ts)?$/ }, (args) => {
      if (path.resolve(args.resolveDir, args.path.endsWith('.ts') ? args.path : `${args.path}.ts`) !== path.join(root, TUNING_SOURCE)) return undefined;
      return { path: `./${TUNING_FILE}`, external: true };
    });
  },
};

/**
 * `codeCache`: the bundle is CommonJS (`<out>.cjs`, no import.meta but the one code-cache.js passes)
 * and `outfile` a small ES module that imports the tuning, then runs it through scripts/code-cache.js
 * with V8's code cache kept beside it (written by the first start, where the folder is writable).
 * Not for the Electron build yet: its bundle is the ES module it was (an entry with top-level await
 * cannot be CommonJS, and this machine cannot run Electron to test the other).
 */
export async function bundleHost(entry: string, outfile: string, opts: { sourcemap?: boolean; codeCache?: boolean } = {}): Promise<void> {
  const common = { bundle: true, platform: 'node', target: 'node22', logLevel: 'warning', absWorkingDir: root, sourcemap: opts.sourcemap ?? false } as const;
  const outDir = path.dirname(path.resolve(root, outfile));
  await build({ ...common, format: 'esm', entryPoints: [TUNING_SOURCE], outfile: path.join(outDir, TUNING_FILE) });
  // Whitespace and syntax minified, names kept (stack traces, plugin names, error classes): V8 keeps
  // the whole source in the heap for lazy compiling, and 2.9 -> 1.9 MB of it was ~4 MiB less heap
  // at idle (bench/startup.ts' RSS after start). The Electron build's source map maps it back.
  const minified = { external: EXTERNAL_PACKAGES, minifyWhitespace: true, minifySyntax: true } as const;
  if (opts.codeCache) {
    const body = bodyOf(outfile);
    // The tuning is the stub's first import, evaluated before the body is even read.
    await build({ ...common, ...minified, entryPoints: [entry], outfile: body, plugins: [tuningInStub, LAZY_FASTIFY_BUILTINS, BUILTINS_ONCE, LUA_INLINE], ...CJS_BODY });
    await build({
      ...common,
      format: 'esm',
      outfile,
      external: [`./${TUNING_FILE}`],
      stdin: {
        contents: `import "./${TUNING_FILE}";\nimport { fileURLToPath } from "node:url";\nimport { runWithCodeCache } from "./scripts/code-cache.js";\nrunWithCodeCache(fileURLToPath(new URL(${JSON.stringify(`./${path.basename(body)}`)}, import.meta.url)));\n`,
        resolveDir: root,
        sourcefile: 'code-cache-stub.js',
      },
    });
  } else {
    // Also as a banner, the file's first line: esbuild hoists the imports of modules the entry loads
    // lazily (an `await import()` of our own code becomes a wrapper inside the bundle) above the
    // entry's own, so the entry's import of the tuning alone could come after them.
    await build({
      ...common,
      ...minified,
      format: 'esm',
      entryPoints: [entry],
      outfile,
      plugins: [tuningBeside, LAZY_FASTIFY_BUILTINS, LUA_INLINE],
      banner: { js: `import "./${TUNING_FILE}";\n${REQUIRE_BANNER}` },
    });
  }
  // Built without the tuning first the app would still run, only heavier: fail the build instead.
  // Static import statements, minified (`import"x";import{a as b}from"y";`) or not; never import("x").
  const imports = [...fs.readFileSync(path.resolve(root, outfile), 'utf8').matchAll(/(?:^|[;\n])import\s*(?:[^;'"()]*?from\s*)?"([^"]+)";/g)].map((m) => m[1]);
  const before = imports.slice(0, imports.indexOf(`./${TUNING_FILE}`)).filter((m) => m !== 'electron');
  if (imports.includes(`./${TUNING_FILE}`) && before.length > 0) throw new Error(`${outfile}: ${before.join(', ')} imported before ./${TUNING_FILE}`);
}

/** The CommonJS bundle a `codeCache` stub runs: `cli.mjs` -> `cli.cjs`. */
export function bodyOf(outfile: string): string {
  return outfile.replace(/\.[cm]?js$/, '') + '.cjs';
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [entry, outfile] = process.argv.slice(2);
  if (!entry || !outfile) {
    process.stderr.write('usage: node --import tsx scripts/build-bundle.ts <entry.ts> <out.js>\n');
    process.exit(2);
  }
  // Run by plain node (bench/startup.ts, bench/footprint.ts, test/packaging): with the code cache.
  await bundleHost(entry, outfile, { codeCache: true });
}
