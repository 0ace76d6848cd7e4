// The folder holding Jobscope's package.json, found from this module's location, so the same code
// works from the sources (server/ui/), from the Electron bundle (dist-electron/) and inside app.asar.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function packageRoot(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    try {
      if ((JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string }).name === 'jobscope') return (cached = dir);
    } catch {
      /* not here */
    }
    const up = path.dirname(dir);
    if (up === dir) return (cached = process.cwd());
    dir = up;
  }
}

/** Where the built renderer lives unless --ui-dir says otherwise. */
export function defaultUiDir(): string {
  return path.join(packageRoot(), 'dist', 'renderer');
}
