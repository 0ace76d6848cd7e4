// Compiles the Electron shell into dist-electron/: main.js (ESM, the server bundled in, npm packages
// left as imports from node_modules) and preload.cjs (a sandboxed preload must be CommonJS).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const common = { bundle: true, platform: 'node', target: 'node22', sourcemap: true, logLevel: 'warning', absWorkingDir: root } as const;

await build({ ...common, entryPoints: ['electron/main.ts'], outfile: 'dist-electron/main.js', format: 'esm', packages: 'external' });
await build({ ...common, entryPoints: ['electron/preload.ts'], outfile: 'dist-electron/preload.cjs', format: 'cjs', external: ['electron'] });
process.stderr.write('jobscope: Electron shell built into dist-electron/\n');
