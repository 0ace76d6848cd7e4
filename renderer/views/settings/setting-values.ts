// A setting's value as typed in its field, and back. Values stay as typed until the server has
// parsed them with the flags' own parser, so its message (naming the flag) is the one shown.
import type { SettingValue, SettingView } from '../../api/settings.ts';

export function shown(v: SettingValue): string {
  return v === null || v === undefined ? '' : String(v);
}

/** '' = remove the saved value; numbers and booleans as JSON values when they read as such. */
export function parsed(kind: SettingView['kind'], text: string): SettingValue {
  const t = text.trim();
  if (t === '') return null;
  if (kind === 'bool') return t === 'true' ? true : t === 'false' ? false : t;
  if (kind === 'int' || kind === 'mb') {
    const n = Number(t);
    return Number.isFinite(n) ? n : t;
  }
  return t;
}
