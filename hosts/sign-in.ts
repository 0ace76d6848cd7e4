// The sign-in link browser mode and `serve` print: the token rides in the URL fragment, which a
// browser never sends, so it reaches no server or proxy log; the UI reads it and drops it from the
// address bar.
import os from 'node:os';

export function signInLink(baseUrl: string, token: string): string {
  const u = new URL(baseUrl);
  // A wildcard bind is not an address a browser can open; the machine's name is.
  if (u.hostname === '0.0.0.0' || u.hostname === '[::]') u.hostname = os.hostname();
  return `${u.origin}/#token=${encodeURIComponent(token)}`;
}
