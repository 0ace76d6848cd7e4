// A multipart/form-data part's header block as bench/experiments/form-parser.ts reads it: strictly,
// only what a form upload needs (Content-Disposition's name and filename, Content-Type's media type
// and charset) and only in forms whose meaning is plain. Where busboy reads a doubtful block
// leniently (a line that is no header, folded lines, unquoted junk after a quoted value, RFC 2231
// names, a repeated parameter), the form is refused here with what to send instead; busboy skips
// or renames such a part silently.
import { badRequest } from '../../server/http/errors.ts';

/** A form this parser will not read: a 400 that says what to send instead (busboy's errors were answered the same way). */
export const malformed = (what: string) => badRequest(`broken multipart body: ${what}`);

export interface PartHead {
  name: string;
  /** Present (maybe "") when the disposition names a file; the last segment of the client's path. */
  filename?: string;
  /** The Content-Type's media type, lower-cased; undefined without the header. */
  mediaType?: string;
  /** The Content-Type's charset parameter, lower-cased, when it has one. */
  charset?: string;
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const HEADER_LINE = new RegExp(`^(${TOKEN}):[ \\t]*([^\\r\\n]*?)[ \\t]*$`);
const MEDIA_TYPE = new RegExp(`^(${TOKEN}/${TOKEN})[ \\t]*(;.*)?$`);
const PARAM = new RegExp(`^;[ \\t]*(${TOKEN})[ \\t]*=[ \\t]*(?:"((?:[^"\\\\]|\\\\[\\s\\S])*)"|(${TOKEN}))[ \\t]*`);

/** Parses the block between a delimiter's line end and the empty line; `block` starts with that line end's text ("" when well-formed). */
export function parsePartHead(block: string, maxPairs: number): PartHead {
  const lines = block.split('\r\n');
  // busboy skips a part whose delimiter line carries anything (even RFC 2046's padding): refused here.
  if (lines[0] !== '') throw malformed('a boundary line is followed by other text: end it with CRLF');
  if (lines.length - 1 > maxPairs) throw malformed(`a part has more than ${maxPairs} header lines`);
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const m = HEADER_LINE.exec(lines[i]!);
    if (!m) throw malformed('a part header is not one "Name: value" line (no folding, no bare CR or LF)');
    const name = m[1]!.toLowerCase();
    if (!headers.has(name)) headers.set(name, m[2]!);
  }
  const disposition = headers.get('content-disposition');
  if (disposition === undefined) throw malformed('a part has no Content-Disposition header');
  const d = /^form-data[ \t]*(;.*)?$/i.exec(disposition);
  if (!d) throw malformed('a part\'s Content-Disposition is not "form-data; name=…"');
  const params = parseParams(d[1] ?? '');
  const name = params.get('name');
  if (name === undefined) throw malformed('a part has no name');
  const head: PartHead = { name };
  const filename = params.get('filename');
  if (filename !== undefined) head.filename = basename(filename);
  const type = headers.get('content-type');
  if (type !== undefined) {
    const t = MEDIA_TYPE.exec(type);
    if (!t) throw malformed('a part\'s Content-Type is not "type/subtype; name=value"');
    head.mediaType = t[1]!.toLowerCase();
    const charset = parseParams(t[2] ?? '').get('charset');
    if (charset !== undefined) head.charset = charset.toLowerCase();
  }
  return head;
}

/** `; key=token` or `; key="quoted"` pairs, keys lower-cased; a repeated key or an RFC 2231 `key*` is refused. */
export function parseParams(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let rest = text;
  while (rest !== '') {
    const p = PARAM.exec(rest);
    if (!p) throw malformed('a header parameter is not name=value or name="value"');
    rest = rest.slice(p[0].length);
    const key = p[1]!.toLowerCase();
    if (key.endsWith('*')) throw malformed('send part names without RFC 2231 encoding (name*=)');
    if (out.has(key)) throw malformed(`a header repeats its "${key}" parameter`);
    // As busboy reads a quoted string: \" and \\ stand for the character, any other \x stays as it is.
    out.set(key, p[2] !== undefined ? p[2].replace(/\\(["\\])/g, '$1') : p[3]!);
  }
  return out;
}

/** The last segment of a client's path, as busboy gives a file name ("." and ".." become ""). */
function basename(name: string): string {
  const cut = Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\'));
  const base = cut >= 0 ? name.slice(cut + 1) : name;
  return base === '..' || base === '.' ? '' : base;
}
