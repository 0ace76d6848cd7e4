// `jobscope <command>`: a short entry that only turns flags into a Config and hands over.
import { Command, Option } from 'commander';
import { SETTINGS, resolveConfig, ConfigError, type Config } from './config.ts';
import { serve } from './serve.ts';
import { simulateCommand } from './simulator/cli-simulate.ts';

function addSettingFlags(cmd: Command): Command {
  for (const s of SETTINGS) {
    const opt = new Option(s.flag, `${s.help} [env ${s.env}]`);
    if (s.default !== undefined && s.kind !== 'bool') opt.default(undefined, String(s.default));
    cmd.addOption(opt);
  }
  return cmd;
}

export function configFromFlags(opts: Record<string, unknown>): Config {
  const picked: Partial<Record<keyof Config, unknown>> = {};
  // Commander names a value after its flag (--max-artifact-mb → maxArtifactMb), not after the Config
  // key (maxArtifactBytes): look each one up by the flag's own name, or such flags are silently ignored.
  for (const s of SETTINGS) {
    const name = new Option(s.flag).attributeName();
    if (opts[name] !== undefined) picked[s.key] = opts[name];
  }
  return resolveConfig(picked);
}

const program = new Command('jobscope')
  .description('Jobscope: watch a background job system and simulate GitLab CI runners')
  .showHelpAfterError();

addSettingFlags(program.command('serve').description('run the headless server (runner API v1, metrics API, control API, UI)')).action(
  async (opts: Record<string, unknown>) => {
    await serve(configFromFlags(opts));
  },
);

simulateCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`jobscope: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`jobscope: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
