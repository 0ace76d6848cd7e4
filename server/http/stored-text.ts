// U+0000 (NUL) in text a client asks us to store. PostgreSQL's text and jsonb cannot hold it (text:
// "invalid byte sequence for encoding UTF8: 0x00"; jsonb: "unsupported Unicode escape sequence"),
// where SQLite keeps it. Accepting it on one store and failing the write on the other would make a
// runner's registration depend on the store behind the server, and a copy of a SQLite store into
// PostgreSQL would fail on rows accepted earlier. One rule for both: a request whose stored text
// holds a NUL is refused with a 400 before anything is written. GitLab 8.17 on PostgreSQL failed the
// same requests (the pg driver refuses a string with a NUL byte: a 500); never a 5xx here.
//
// Only what is stored is checked: a trace (a file, raw bytes) may hold any byte.
import { badRequest } from './errors.ts';

/**
 * Where the first NUL in `value` is: '' for a string holding one, 'a.b' for one under keys a and b
 * (an object key counts too); undefined when there is none. Iterative, so any nesting is safe.
 */
export function nulAt(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  const join = (at: string, key: string) => (at ? `${at}.${key}` : key);
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return at;
    } else if (v !== null && typeof v === 'object' && !Buffer.isBuffer(v)) {
      for (const [k, child] of Object.entries(v)) {
        if (k.includes('\u0000')) return join(at, k);
        stack.push([child, join(at, k)]);
      }
    }
  }
  return undefined;
}

/** Throws a 400 naming the field when `value` (a field about to be stored) holds a NUL anywhere. */
export function refuseNul(field: string, value: unknown): void {
  const at = nulAt(value);
  if (at !== undefined) throw badRequest(`"${at === '' ? field : `${field}.${at}`}" must not contain the NUL character (\\u0000)`);
}
