// A setting's value as typed in its field, and back. Values stay as typed until the server has
// parsed them with the flags' own parser, so its message (naming the flag) is the one shown.
import type { SettingValue, SettingView } from '../../api/settings.ts';
import { num } from '../../components/format.ts';

export function shown(v: SettingValue): string {
  return v === null || v === undefined ? '' : String(v);
}

/** A bind address other machines can reach (the server answers the same; this only decides when to ask). */
export function exposesHost(text: string): boolean {
  const h = text.trim().toLowerCase().replace(/^\[|\]$/g, '');
  return h !== '' && h !== 'localhost' && h !== '::1' && !/^127\./.test(h);
}

/** What a setting accepts, shown next to its field: the choices, or the range in its flag's units. */
export function allowed(s: Pick<SettingView, 'choices' | 'min' | 'max' | 'kind'>): string {
  if (s.choices) return s.choices.join(' · ');
  if (s.min !== null && s.max !== null) return `${num(s.min)} – ${num(s.max)}${s.kind === 'mb' ? ' MiB' : ''}`;
  return '';
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
