// The top-level members of a JSON object's text, each value kept as its own text. A job payload in
// Redis may nest its args deeper than any recursive walker survives (JSON.parse copes, V8's
// JSON.stringify overflows its stack): a failure's fields are written into the payload's text and
// the args shown as their text, never re-serialized. No library in package.json gives member
// spans of a JSON text, so this small scanner is ours: one loop, no recursion, whatever the depth.

/** Index just past the JSON value starting at `i` (after whitespace); -1 if the text ends first. */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c /* \ */) i++;
      if (i >= text.length) return -1;
      if (depth === 0) return i + 1;
    } else if (c === 0x7b || c === 0x5b /* { [ */) depth++;
    else if (c === 0x7d || c === 0x5d /* } ] */) {
      if (depth === 0) return i; // the enclosing object's end: a scalar ran up to it
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && (c === 0x2c /* , */ || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) {
      // a scalar (number, true, false, null) ends at a comma or whitespace
      return i;
    }
  }
  return depth === 0 ? i : -1;
}

const skipSpace = (text: string, i: number) => {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
};

/**
 * The members of the object `text` holds, in order, as [key, value text]; null when the text is not
 * an object (callers parse it first: this trusts it is valid JSON).
 */
export function jsonMembers(text: string): [string, string][] | null {
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return null;
  const out: [string, string][] = [];
  i = skipSpace(text, i + 1);
  while (i < text.length && text[i] !== '}') {
    const keyEnd = valueEnd(text, i);
    if (keyEnd < 0 || text[i] !== '"') return null;
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd);
    if (text[i] !== ':') return null;
    const start = skipSpace(text, i + 1);
    const end = valueEnd(text, start);
    if (end < 0) return null;
    out.push([key, text.slice(start, end)]);
    i = skipSpace(text, end);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return out;
}

/** The text of member `key` of the object `text` holds; undefined when absent or not an object. */
export function jsonMemberText(text: string, key: string): string | undefined {
  return jsonMembers(text)?.find(([k]) => k === key)?.[1];
}

/**
 * `text` (an object) with `changes` set: a member already there keeps its place, a new one is
 * appended, `undefined` removes one; every other member is kept byte for byte. Each change value
 * is serialized alone (shallow values: times, counts, messages).
 */
export function withJsonMembers(text: string, changes: Record<string, unknown>): string | null {
  const members = jsonMembers(text);
  if (!members) return null;
  const left = new Map(Object.entries(changes));
  const parts: string[] = [];
  for (const [k, v] of members) {
    if (!left.has(k)) parts.push(`${JSON.stringify(k)}:${v}`);
    else {
      const nv = left.get(k);
      left.delete(k);
      if (nv !== undefined) parts.push(`${JSON.stringify(k)}:${JSON.stringify(nv)}`);
    }
  }
  for (const [k, nv] of left) if (nv !== undefined) parts.push(`${JSON.stringify(k)}:${JSON.stringify(nv)}`);
  return `{${parts.join(',')}}`;
}
