// Sizes and bodies as people read them, shared by the simulator and the runner console.
import type { BodyPreview } from '../../api/simulator.ts';

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n) || n < 0) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10 * 1024 ? 1 : 0)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** JSON bodies indented for reading; anything else as it came. */
function pretty(text: string): string {
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** A body preview as text: the UTF-8 text itself, or a note for binary bodies. */
export function bodyText(b: BodyPreview | undefined): string {
  if (!b || b.size === 0) return '';
  if (b.text !== undefined) return b.truncated ? `${b.text}\n… (cut; ${b.size} bytes in all)` : pretty(b.text);
  if (b.base64 !== undefined) return `[binary, ${b.size} bytes${b.truncated ? ', only the first kept' : ''}]`;
  return b.size > 0 ? `[${b.size} bytes, not kept]` : '';
}

export function base64Bytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function header(headers: [string, string][] | undefined, name: string): string | undefined {
  const n = name.toLowerCase();
  return headers?.find(([k]) => k.toLowerCase() === n)?.[1];
}
