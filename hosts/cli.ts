// `jobscope <command>`: a short entry that only turns flags into a Config and hands over.
import './v8-tuning.ts'; // first: V8 flags before SQLite's WebAssembly compiles
import { Command } from 'commander';
import { ConfigError } from '../server/config.ts';
import { addSettingFlags, configFromFlags } from './cli-config.ts';
import { serve } from './serve.ts';
import { simulateCommand } from '../simulator/cli-simulate.ts';
import { startEmbeddedCoordinator } from './embedded-coordinator.ts';
import { PgStoreError } from '../server/store/database-url.ts';

/** Exit code of a start refused by --database (unreachable, refused, schema newer than this version). */
const EXIT_DATABASE = 3;

const program = new Command('jobscope')
  .description('Jobscope: watch a background job system and simulate GitLab CI runners')
  .showHelpAfterError();

addSettingFlags(program.command('serve').description('run the headless server (runner API v1, metrics API, control API, UI)')).action(
  async (opts: Record<string, unknown>) => {
    await serve(configFromFlags(opts));
  },
);

simulateCommand(program, { startEmbedded: startEmbeddedCoordinator });

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`jobscope: ${err.message}\n`);
    process.exit(2);
  }
  // Its text names the URL without the password and says what to do: no stack, which would only
  // bury it. By name too: the PostgreSQL store is loaded on demand and may be a second copy of the class.
  if (err instanceof PgStoreError || (err as Error | undefined)?.name === 'PgStoreError') {
    process.stderr.write(`jobscope: --database: ${(err as Error).message}\n`);
    process.exit(EXIT_DATABASE);
  }
  process.stderr.write(`jobscope: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
