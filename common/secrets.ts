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
