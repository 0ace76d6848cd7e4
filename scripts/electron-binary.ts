// Is the Electron binary installed? Electron 42+ downloads it on first use, so the package can be
// present without it. Checked by reading the package's path.txt, never by loading 'electron'
// (which would start that download).
import fs from 'node:fs';
import path from 'node:path';

export function electronBinary(root: string): string | undefined {
  const pkg = path.join(root, 'node_modules', 'electron');
  let rel: string;
  try {
    rel = fs.readFileSync(path.join(pkg, 'path.txt'), 'utf8').trim();
  } catch {
    return undefined;
  }
  if (!rel) return undefined;
  const bin = path.join(pkg, 'dist', rel);
  return fs.existsSync(bin) ? bin : undefined;
}

export const NO_ELECTRON_REASON =
  'Electron binary not installed (it downloads on first use and this machine cannot reach its download host); serving the UI in browser mode';
