// What counts as a secret on the wire: the headers that carry credentials and the names of fields
// and query parameters whose values are tokens. One definition for the server log and the
// simulator's journal exports, so neither hides less than the other.

/** Request and response headers whose whole value is a credential. */
export const SECRET_HEADERS: ReadonlySet<string> = new Set(['private-token', 'build-token', 'job-token', 'authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/** Field, key and parameter names whose string values are secrets: token, private_token, runners_token, password… */
export const SECRET_NAME = /token|password|passwd|secret/i;

export const isSecretName = (name: string): boolean => SECRET_NAME.test(name);

export function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

const QUERY_FIELD = /([?&])([^=&#]{1,100})=([^&#]*)/g;

/** The URL with the value of every secret-named query parameter replaced by `mark`. */
export function hideQuery(url: string, mark: string): string {
  return url.replace(QUERY_FIELD, (m, sep: string, name: string) => (isSecretName(decodeURIComponentSafe(name)) ? `${sep}${name}=${mark}` : m));
}

// scheme://userinfo@ anywhere in a text: a URL on its own, inside a JSON string (also with its
// slashes escaped as \/), in an error message. The userinfo runs to the last @ before the host, so a
// password holding a raw @ is covered whole.
const USERINFO = /\b([a-z][a-z0-9+.-]*:(?:\/\/|\\\/\\\/))([^\s/?#"'<>\\@]*(?:@[^\s/?#"'<>\\@]*)*)@/gi;

/**
 * The text with the credentials of every URL in it replaced by `mark`: `user:password@` keeps the
 * user (`oauth2:mark@`), a bare `token@` is all secret (`mark@`).
 */
export function hideUserinfo(text: string, mark: string): string {
  if (!text.includes('@')) return text;
  return text.replace(USERINFO, (_m, scheme: string, info: string) => {
    const colon = info.indexOf(':');
    return `${scheme}${colon >= 0 ? `${info.slice(0, colon)}:${mark}` : mark}@`;
  });
}

/** The passwords (or bare tokens) written as URL userinfo in a text, decoded. */
export function userinfoSecrets(text: string): string[] {
  if (!text.includes('@')) return [];
  return [...text.matchAll(USERINFO)].map((m) => decodeURIComponentSafe(m[2]!.slice(m[2]!.indexOf(':') + 1))).filter(Boolean);
}
