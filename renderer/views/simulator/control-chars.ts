// Control characters in a body, for the body view: whether it has terminal escape codes, and the
// text cut where its control characters are, each named ("ESC", "CR") for a chip. Not Unicode's
// control pictures (␛): none of the fonts styles.css names has them on Linux, where they fell
// back to a font with a box or nothing at all.
const ESC = '\u001b';

export function hasEscapes(text: string): boolean {
  return text.includes(ESC);
}

const C0 = ['NUL', 'SOH', 'STX', 'ETX', 'EOT', 'ENQ', 'ACK', 'BEL', 'BS', 'HT', 'LF', 'VT', 'FF', 'CR', 'SO', 'SI', 'DLE', 'DC1', 'DC2', 'DC3', 'DC4', 'NAK', 'SYN', 'ETB', 'CAN', 'EM', 'SUB', 'ESC', 'FS', 'GS', 'RS', 'US'];

/** A piece of text, or one control character by its ASCII name. */
export type TextPart = string | { control: string; code: number };

/** Every C0 control except newline and tab, and DEL, as a named part; the text between as strings. */
export function controlParts(text: string): TextPart[] {
  const out: TextPart[] = [];
  let from = 0;
  for (const m of text.matchAll(/[\u0000-\u0008\u000b-\u001f\u007f]/g)) {
    if (m.index > from) out.push(text.slice(from, m.index));
    const code = m[0].charCodeAt(0);
    out.push({ control: code === 0x7f ? 'DEL' : C0[code]!, code });
    from = m.index + 1;
  }
  if (from < text.length) out.push(text.slice(from));
  return out;
}
