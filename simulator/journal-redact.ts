// Tokens in journal entries, found and replaced by a visible placeholder. The journal keeps the
// exchanges as sent (so an explicit opt-in can still export them whole); everything that leaves
// through the API is redacted here unless the caller asks for secrets.
//
// Two passes: by position (secret headers, query parameters, JSON keys, form and multipart fields,
// non-public build variables), then by value, so that a token found in one place is also hidden
// where it shows up unlabelled (the build token inside repo_url, a runner token echoed in a trace).
import type { BodyPreview, JournalEntry } from '../contract/simulator.ts';
import { SECRET_HEADERS, SECRET_NAME, decodeURIComponentSafe, hideQuery, hideUserinfo, isSecretName, userinfoSecrets } from '../common/secrets.ts';

export const REDACTED = '[REDACTED]';

/** Known secrets, looked up by whole word. */
export type SecretLookup = Pick<ReadonlySet<string>, 'has' | 'size'>;

/** Shorter values are not searched for in free text: they would match ordinary words. */
const MIN_FREE_TEXT = 6;
/** Characters tokens are made of; free text is cut on anything else before looking words up. */
const WORD = /[A-Za-z0-9_\-.~]+/g;


function headerValue(headers: [string, string][], name: string): string | undefined {
  return headers.find(([n]) => n.toLowerCase() === name)?.[1];
}

/** Collects the secret values of a JSON document: strings under secret keys, values of non-public variables. */
function walkJson(v: unknown, found: Set<string>): void {
  if (Array.isArray(v)) {
    for (const x of v) walkJson(x, found);
    return;
  }
  if (!v || typeof v !== 'object') return;
  const o = v as Record<string, unknown>;
  // A GitLab build variable {key, value, public}: only public ones may be shown.
  if (typeof o.key === 'string' && typeof o.value === 'string' && (o.public === false || isSecretName(o.key))) found.add(o.value);
  for (const [k, x] of Object.entries(o)) {
    if (typeof x === 'string' && isSecretName(k)) found.add(x);
    else walkJson(x, found);
  }
}

const JSON_STRING_FIELD = /"([^"\\]{1,100})"\s*:\s*"((?:[^"\\]|\\.)*)"/g;
const MULTIPART_FIELD = /name="([^"]{1,100})"(?:;[^\r\n]*)?\r\n(?:[^\r\n]+\r\n)*\r\n([^\r\n]*)/g;

/** Secret values written in one body, by its content type (a cut body is read as far as it goes). */
function secretsOfBody(body: BodyPreview, type: string, found: Set<string>): void {
  const text = body.text;
  if (text === undefined) return;
  // A password in a URL (a build's repo_url, say) may also show up bare, in a trace.
  for (const s of userinfoSecrets(text)) found.add(s);
  if (!SECRET_NAME.test(text)) return;
  if (type.includes('json') || /^\s*[{[]/.test(text)) {
    try {
      walkJson(JSON.parse(text), found);
      return;
    } catch {
      // Cut or not JSON after all: the labelled string fields are still findable.
      for (const m of text.matchAll(JSON_STRING_FIELD)) if (isSecretName(m[1]!)) found.add(JSON.parse(`"${m[2]}"`) as string);
      return;
    }
  }
  if (type.includes('x-www-form-urlencoded')) {
    for (const [k, v] of new URLSearchParams(text)) if (isSecretName(k) && v) found.add(v);
    return;
  }
  if (type.includes('multipart/')) for (const m of text.matchAll(MULTIPART_FIELD)) if (isSecretName(m[1]!) && m[2]) found.add(m[2]);
}

function secretsOfUrl(url: string, found: Set<string>): void {
  const q = url.indexOf('?');
  if (q < 0) return;
  for (const [k, v] of new URLSearchParams(url.slice(q + 1).split('#')[0])) if (isSecretName(k) && v) found.add(v);
}

/** Every secret value an entry carries, wherever it is labelled as one. */
export function secretsOf(e: Omit<JournalEntry, 'id'>): Set<string> {
  const found = new Set<string>();
  for (const [name, value] of [...e.request_headers, ...e.response_headers]) {
    if (!SECRET_HEADERS.has(name.toLowerCase()) || !value) continue;
    found.add(value);
    // "Bearer abc", "name=value; Path=/": the token part alone, as it may appear elsewhere.
    const bare = value.replace(/^(Bearer|Basic|token)\s+/i, '').split(';')[0]!.split('=').pop()!.trim();
    if (bare) found.add(bare);
  }
  secretsOfUrl(e.url, found);
  for (const s of userinfoSecrets(e.url)) found.add(s);
  secretsOfBody(e.request_body, headerValue(e.request_headers, 'content-type') ?? '', found);
  secretsOfBody(e.response_body, headerValue(e.response_headers, 'content-type') ?? '', found);
  found.delete('');
  found.delete(REDACTED);
  return found;
}

/** Replaces secrets in free text: this entry's own (exactly) and tokens learned from others (as whole words). */
function scrub(text: string, own: string[], learned: SecretLookup): string {
  let out = hideUserinfo(text, REDACTED);
  for (const s of own) if (out.includes(s)) out = out.split(s).join(REDACTED);
  if (learned.size) out = out.replace(WORD, (w) => (w.length >= MIN_FREE_TEXT && learned.has(w) ? REDACTED : w));
  return out;
}

// By position, for values too short to look for in free text ("tok" would also hit "token").
const FORM_FIELD = /(^|&)([^=&]{1,100})=([^&]*)/g;

function hideFields(text: string, type: string): string {
  if (type.includes('x-www-form-urlencoded')) return text.replace(FORM_FIELD, (m, sep: string, name: string) => (isSecretName(decodeURIComponentSafe(name)) ? `${sep}${name}=${REDACTED}` : m));
  if (type.includes('multipart/')) return text.replace(MULTIPART_FIELD, (m, name: string, value: string) => (isSecretName(name) && value ? m.slice(0, m.length - value.length) + REDACTED : m));
  // JSON, also when cut or sent without its type.
  return text.replace(JSON_STRING_FIELD, (m, name: string, value: string) => (isSecretName(name) && value ? `${m.slice(0, m.length - value.length - 1)}${REDACTED}"` : m));
}

function scrubBody(b: BodyPreview, type: string, own: string[], learned: SecretLookup): BodyPreview {
  return b.text === undefined ? b : { ...b, text: scrub(hideFields(b.text, type), own, learned) };
}

/** A body preview with the credentials of every URL in it hidden (the console shows tokens, not passwords in URLs). */
export function hideUrlCredentials(b: BodyPreview): BodyPreview {
  return b.text === undefined ? b : { ...b, text: hideUserinfo(b.text, REDACTED) };
}

/** Either of two lookups: the journal's learned tokens and the server's own. */
export function eitherSecret(a: SecretLookup, b: SecretLookup): SecretLookup {
  return { has: (w) => a.has(w) || b.has(w), size: a.size + b.size };
}

/**
 * A copy of the entry with every secret replaced by [REDACTED]. `learned`: tokens seen in other
 * entries of the journal (a runner token from an earlier register answer, say).
 */
export function redactEntry(e: JournalEntry, learned: SecretLookup = new Set()): JournalEntry {
  // Longest first, so a token that contains another is replaced whole.
  const own = [...secretsOf(e)].filter((x) => x.length >= MIN_FREE_TEXT).sort((a, b) => b.length - a.length);
  const headers = (list: [string, string][]) =>
    list.map(([n, v]): [string, string] => [n, SECRET_HEADERS.has(n.toLowerCase()) ? REDACTED : scrub(v, own, learned)]);
  return {
    ...e,
    url: scrub(hideQuery(e.url, REDACTED), own, learned),
    path: scrub(hideQuery(e.path, REDACTED), own, learned),
    request_headers: headers(e.request_headers),
    response_headers: headers(e.response_headers),
    request_body: scrubBody(e.request_body, headerValue(e.request_headers, 'content-type') ?? '', own, learned),
    response_body: scrubBody(e.response_body, headerValue(e.response_headers, 'content-type') ?? '', own, learned),
    error: e.error === null ? null : scrub(e.error, own, learned),
  };
}
