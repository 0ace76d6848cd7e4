// Settings as the UI edits them: every savable flag, what is in force now, what is saved for the next start.
import { Type, type Static } from '@sinclair/typebox';

// One `type` list, not anyOf: the validator coerces types and tries anyOf branches in order, so null
// became "" (and true "true") before the handler saw it; with a list it coerces only what matches none.
const Value = Type.Unsafe<string | number | boolean | null>({ type: ['string', 'number', 'boolean', 'null'] });

export const SettingView = Type.Object({
  name: Type.String({ description: 'as in settings.json and the flag without dashes, e.g. max-artifact-mb' }),
  flag: Type.String(),
  env: Type.String(),
  kind: Type.Union([Type.Literal('string'), Type.Literal('int'), Type.Literal('bool'), Type.Literal('mb')]),
  help: Type.String(),
  default: Value,
  effective: Value,
  saved: Value,
  restart_required: Type.Boolean({ description: 'the saved value differs from the one in force; it applies at the next start' }),
  choices: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'the only values a string setting takes' }),
  min: Type.Union([Type.Number(), Type.Null()], { description: 'smallest value of a number setting, in the units of its flag (MiB for mb)' }),
  max: Type.Union([Type.Number(), Type.Null()]),
  problem: Type.Union([Type.String(), Type.Null()], { description: 'why the saved value is not used (it is ignored at start), or null' }),
});
export type SettingView = Static<typeof SettingView>;

export const SettingsView = Type.Object({
  data_dir: Type.String(),
  settings_file: Type.String(),
  settings: Type.Array(SettingView),
  warnings: Type.Array(Type.String(), { description: 'saved settings ignored at this start (and why), or that open the server to other machines' }),
  saved_warnings: Type.Optional(Type.Array(Type.String(), { description: 'in the answer to a save: values saved although the service they name could not be reached now (confirm_unreachable)' })),
});
export type SettingsView = Static<typeof SettingsView>;

export const SettingsUpdate = Type.Object({
  values: Type.Record(Type.String(), Value, { description: 'setting name → value; null removes the saved value' }),
  confirm_expose: Type.Optional(Type.Boolean({ description: 'required to save a host other than loopback: the next start will be reachable from other machines' })),
  confirm_unreachable: Type.Optional(
    Type.Boolean({ description: 'save a value naming a service (the Redis URL) although it cannot be reached now: each is tried first (connect and PING within --sidekiq-timeout-ms), and without this a failure is a 400' }),
  ),
});
export type SettingsUpdate = Static<typeof SettingsUpdate>;

export const LogQuery = Type.Object({
  lines: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 200 })),
  level: Type.Optional(Type.Union([Type.Literal('debug'), Type.Literal('info'), Type.Literal('warn'), Type.Literal('error')])),
  private_token: Type.Optional(Type.String()),
});
export type LogQuery = Static<typeof LogQuery>;

export const LogLine = Type.Object({ time: Type.String(), level: Type.String(), msg: Type.String(), fields: Type.Record(Type.String(), Type.Unknown()) });
export type LogLine = Static<typeof LogLine>;
export const LogView = Type.Object({ file: Type.String(), lines: Type.Array(LogLine) });
export type LogView = Static<typeof LogView>;

export const ResetRequest = Type.Object({ confirm: Type.String({ description: 'must be "reset"' }) });
export type ResetRequest = Static<typeof ResetRequest>;
export const ResetAnswer = Type.Object({ message: Type.String() });
