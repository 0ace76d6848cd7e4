// `npm start`: the desktop app where the Electron binary is installed, else the same UI in browser mode.
// Takes the same flags as `serve` (e.g. --data-dir, --port).
import '../hosts/v8-tuning.ts'; // first: V8 flags before SQLite's WebAssembly compiles
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { Command } from 'commander';
import { ConfigError } from '../server/config.ts';
import { addSettingFlags, configFromFlags } from '../hosts/cli-config.ts';
import { packageRoot } from '../server/ui/package-root.ts';
import { ensureUiBuilt } from './ui-build.ts';
import { electronBinary, NO_ELECTRON_REASON } from './electron-binary.ts';
import { serve } from '../hosts/serve.ts';

const root = packageRoot();
const program = new Command('jobscope-start').allowExcessArguments(false);
addSettingFlags(program);
program.parse(process.argv);
const opts = program.opts<Record<string, unknown>>();

ensureUiBuilt(root);
const bin = electronBinary(root);
if (bin) {
  const built = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'build-electron.ts')], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) {
    process.stderr.write('jobscope: building the Electron shell failed (see above)\n');
    process.exit(1);
  }
  process.stderr.write('jobscope: opening the desktop window (Electron)\n');
  const child = spawn(bin, [root, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 0));
} else {
  process.stderr.write(`jobscope: ${NO_ELECTRON_REASON}\n`);
  try {
    await serve(configFromFlags(opts, { mode: 'browser' }));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`jobscope: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
