// "Build the UI if missing or stale": `npm start` and `npm run serve` run this first, so both work
// straight after `npm install`. Stale = a file under renderer/ (or the Vite config) is newer than
// the built index.html. A failed build is reported, not fatal: the APIs still serve.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

function newestMtime(dir: string): number {
  let newest = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

export function uiIsStale(root: string): { stale: boolean; reason: string } {
  const built = path.join(root, 'dist', 'renderer', 'index.html');
  if (!fs.existsSync(path.join(root, 'renderer', 'index.html'))) return { stale: false, reason: 'no renderer sources' };
  if (!fs.existsSync(built)) return { stale: true, reason: 'the UI is not built yet' };
  const builtAt = fs.statSync(built).mtimeMs;
  let sources = newestMtime(path.join(root, 'renderer'));
  const config = path.join(root, 'vite.config.ts');
  if (fs.existsSync(config)) sources = Math.max(sources, fs.statSync(config).mtimeMs);
  return sources > builtAt ? { stale: true, reason: 'renderer/ changed since the last build' } : { stale: false, reason: 'up to date' };
}

/** Builds dist/renderer when needed; returns false when a needed build failed. */
export function ensureUiBuilt(root: string, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): boolean {
  const { stale, reason } = uiIsStale(root);
  if (!stale) return true;
  log(`jobscope: building the UI (${reason}): vite build…`);
  const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const r = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status === 0) {
    log('jobscope: UI built into dist/renderer');
    return true;
  }
  log('jobscope: the UI build failed (see above); the APIs still work. Fix renderer/ and run `npm run build:ui`.');
  return false;
}
