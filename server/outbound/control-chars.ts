// Values we put into another server's protocol (a URL, a header, a Redis AUTH, a multipart header)
// must not hold control characters: a CR/LF in a password turns into separate lines on a text
// protocol (pointed at a memcached or SMTP port, they run as commands), and in a header value it
// makes node:http throw. Refused as a 400 naming the field, before any connection is made.
import { badRequest } from '../http/errors.ts';

const CONTROL = /[\u0000-\u001f\u007f]/;

const NAMES: Record<number, string> = { 0: 'NUL', 9: 'tab', 10: 'LF', 13: 'CR' };

/** Throws a 400 for the first given field whose value holds a control character (CR, LF, NUL, tab…). */
export function refuseControlChars(fields: Record<string, string | undefined | null>): void {
  for (const [field, value] of Object.entries(fields)) {
    if (typeof value !== 'string') continue;
    const m = CONTROL.exec(value);
    if (!m) continue;
    const code = m[0].charCodeAt(0);
    const what = NAMES[code] ?? `U+${code.toString(16).padStart(4, '0').toUpperCase()}`;
    throw badRequest(`${field}: holds a control character (${what}); remove line breaks and other control characters (percent-encoded ones too) and send it again`);
  }
}
