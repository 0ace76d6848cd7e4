// Compiles the Electron shell into dist-electron/: main.js (ESM, the server bundled in, npm packages
// left as imports from node_modules; v8-tuning.js beside it, imported first: see build-bundle.ts) and
// preload.cjs (a sandboxed preload must be CommonJS).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundleHost } from './build-bundle.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

await bundleHost('electron/main.ts', 'dist-electron/main.js', { sourcemap: true });
await build({ bundle: true, platform: 'node', target: 'node22', sourcemap: true, logLevel: 'warning', absWorkingDir: root, entryPoints: ['electron/preload.ts'], outfile: 'dist-electron/preload.cjs', format: 'cjs', external: ['electron'] });
process.stderr.write('jobscope: Electron shell built into dist-electron/\n');
