// The node arguments that run `jobscope` (hosts/cli.ts) in a child process, the way the published bin
// does: the esbuild bundle of scripts/launcher.js (rebuilt only when a source changed since the last
// bundle, so a test always runs the current sources). Tests used to run the sources through tsx,
// whose loader resolves and transforms every module on each start: the crash, model and CLI tests
// start ~40 child processes, and a server start cost ~4.5 s of CPU through tsx against ~3.7 s from
// the bundle (measured with /usr/bin/time, start to "listening" and SIGTERM). child-v8-flags.mjs,
// preloaded, gives a child the V8 flags the bin sets before anything loads (it says why and how much).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBundle } from '../../scripts/launcher.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const V8_FLAGS = path.join(REPO, 'test', 'helpers', 'child-v8-flags.mjs');

/** `[--import child-v8-flags, bundle]`: spawn `process.execPath` with these, then the command and its flags (`serve`, `simulate`). */
export async function jobscopeNodeArgs(): Promise<string[]> {
  return ['--import', V8_FLAGS, await ensureBundle('hosts/cli.ts', { root: REPO, cacheDir: path.join(REPO, 'node_modules', '.cache', 'jobscope') })];
}
