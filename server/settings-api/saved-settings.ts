// The saved settings file, <data dir>/settings.json: what the UI saved for the next start, shown next
// to each setting's default and the value in force. The schema it is checked against is
// server/config.ts (SETTINGS); the instance's tokens are not settings and live in store/sqlite/secrets.ts.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { ConfigError, SAVABLE, SETTINGS_FILE, boundsOf, parseValue, readSavedSettings, savedValueProblem, settingName, type Config, type SettingSpec } from '../config.ts';
import { isLoopbackHost } from '../host-address.ts';
import { redactedUrl } from '../sidekiq/redis-url.ts';
import type { SettingsView } from '../../contract/settings.ts';
import { PRIVATE_FILE_MODE } from '../util/private-files.ts';

/** The value in the units a person types (MiB for sizes), as flags take it; a Redis URL without its password. */
function display(spec: SettingSpec, v: unknown): string | number | boolean | null {
  if (v === undefined || v === null) return null;
  if (spec.key === 'redisUrl' && typeof v === 'string') return redactedUrl(v);
  if (spec.kind === 'mb' && typeof v === 'number') return Math.round((v / (1024 * 1024)) * 1000) / 1000;
  return v as string | number | boolean;
}

/** A saved value (already in the units a person types) as shown: a Redis URL without its password. */
function shown(spec: SettingSpec, v: string | number | boolean | null): string | number | boolean | null {
  return spec.key === 'redisUrl' && typeof v === 'string' ? redactedUrl(v) : v;
}

export function settingsView(config: Config): SettingsView {
  const saved = readSavedSettings(config.dataDir);
  return {
    data_dir: config.dataDir,
    settings_file: path.join(config.dataDir, SETTINGS_FILE),
    warnings: config.settingsWarnings ?? [],
    settings: SAVABLE.map((spec) => {
      const name = settingName(spec);
      const savedValue = saved[name];
      const effective = display(spec, config[spec.key]);
      const problem = savedValue === undefined || savedValue === null ? null : savedValueProblem(spec, savedValue);
      const bounds = boundsOf(spec);
      return {
        name,
        flag: spec.flag,
        env: spec.env,
        kind: spec.kind,
        help: spec.help,
        default: display(spec, spec.default === undefined ? null : spec.kind === 'mb' ? Number(spec.default) * 1024 * 1024 : spec.default),
        effective,
        saved: savedValue === undefined || (savedValue !== null && typeof savedValue === 'object') ? null : shown(spec, savedValue as string | number | boolean | null),
        restart_required: savedValue !== undefined && savedValue !== null && problem === null && String(shown(spec, savedValue as string | number | boolean)) !== String(effective),
        choices: spec.choices ? [...spec.choices] : null,
        min: bounds?.min ?? null,
        max: bounds?.max ?? null,
        problem,
      };
    }),
  };
}

/** settings.json as it would be with `values` saved, each checked as its flag would be (ConfigError when one is refused). */
export function withSaved(dataDir: string, values: Record<string, unknown>, opts: { confirmExpose?: boolean } = {}): Record<string, unknown> {
  const next = readSavedSettings(dataDir);
  for (const [name, value] of Object.entries(values)) {
    const spec = SAVABLE.find((s) => settingName(s) === name);
    if (!spec) throw new ConfigError(`unknown setting "${name}"; known: ${SAVABLE.map(settingName).join(', ')}`);
    if (value === null) {
      delete next[name];
      continue;
    }
    // The same checks as at start, so what is saved here is never ignored there.
    const problem = savedValueProblem(spec, value);
    if (problem) throw new ConfigError(problem);
    const parsed = parseValue(spec, value);
    if (spec.key === 'host' && !isLoopbackHost(String(parsed)) && !opts.confirmExpose) {
      throw new ConfigError(
        `host: ${String(parsed)} makes the next start reachable from other machines (anyone who can reach it can try the tokens); ` +
          'send "confirm_expose": true with it to save it anyway',
      );
    }
    next[name] = display(spec, parsed);
  }
  return next;
}

/** Replaces settings.json atomically with `next` (from withSaved). */
export function writeSettings(dataDir: string, next: Record<string, unknown>): void {
  const file = path.join(dataDir, SETTINGS_FILE);
  const tmp = `${file}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(next, null, 2) + '\n', { mode: PRIVATE_FILE_MODE });
  fs.renameSync(tmp, file);
}
