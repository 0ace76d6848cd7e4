// Flags → Config, shared by every command line that starts a server (`jobscope serve`, `npm start`).
import { Option, type Command } from 'commander';
import { SETTINGS, boundsOf, resolveConfig, type Config } from '../server/config.ts';

export function addSettingFlags(cmd: Command): Command {
  for (const s of SETTINGS) {
    // The default is written into the help text: a commander default would hide whether the flag was given,
    // and the environment and settings.json must still win over a default.
    const dflt = s.default !== undefined && s.kind !== 'bool' ? ` (default: ${String(s.default)})` : '';
    const b = boundsOf(s);
    // The same range a saved value is checked against, so help, flags and the Settings view agree.
    const range = b ? ` [${b.min}..${b.max}]` : s.choices ? ` [${s.choices.join('|')}]` : '';
    cmd.addOption(new Option(s.flag, `${s.help}${dflt}${range} [env ${s.env}]`));
  }
  return cmd;
}

export function configFromFlags(opts: Record<string, unknown>, fixed: Partial<Record<keyof Config, unknown>> = {}): Config {
  const picked: Partial<Record<keyof Config, unknown>> = { ...fixed };
  // Commander names a value after its flag (--max-artifact-mb → maxArtifactMb), not after the Config
  // key (maxArtifactBytes): look each one up by the flag's own name, or such flags are silently ignored.
  for (const s of SETTINGS) {
    const name = new Option(s.flag).attributeName();
    if (opts[name] !== undefined) picked[s.key] = opts[name];
  }
  return resolveConfig(picked);
}
