// Control characters in a body, for the body view: whether it has terminal escape codes, and the
// text with its control characters made visible (Unicode's control pictures, ␛ for ESC).
const ESC = '\u001b';

export function hasEscapes(text: string): boolean {
  return text.includes(ESC);
}

/** Every C0 control except newline and tab, and DEL, as its control picture (U+2400 + code, ␡). */
export function visibleControls(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => (c === '\u007f' ? '\u2421' : String.fromCharCode(0x2400 + c.charCodeAt(0))));
}
