// Where the admin token comes from, in order: the Electron bridge; the sign-in link's fragment
// (`#token=…`, which browsers never send to the server, removed from the address bar at once);
// this tab's sessionStorage; else the sign-in form. sessionStorage, not localStorage: a token should
// not outlive the tab it was pasted into.
import { bridgeBackend } from './bridge.ts';
import { TOKEN_KEY } from '../app/storage-keys.ts';

const KEY = TOKEN_KEY;

export interface Session {
  baseUrl: string; // '' = same origin (browser mode)
  token: string;
  source: 'bridge' | 'link' | 'stored' | 'form';
}

export function takeTokenFromFragment(): string | undefined {
  const m = /(?:^#|[#&])token=([^&]+)/.exec(window.location.hash);
  if (!m) return undefined;
  const token = decodeURIComponent(m[1]!);
  const rest = window.location.hash.replace(/(?:^#|&)token=[^&]+/, '').replace(/^#?&?/, '');
  window.history.replaceState(null, '', window.location.pathname + window.location.search + (rest ? `#${rest}` : ''));
  return token;
}

export async function initialSession(): Promise<Session | undefined> {
  const fromBridge = await bridgeBackend().catch(() => undefined);
  if (fromBridge) return { baseUrl: fromBridge.url.replace(/\/$/, ''), token: fromBridge.token, source: 'bridge' };
  return browserSession();
}

/** The session without the bridge (the link's token, else this tab's), known at once: in a
 *  browser the first render can be the shell, not a "Starting…" screen and another render. */
export function browserSession(): Session | undefined {
  const fromLink = takeTokenFromFragment();
  if (fromLink) {
    sessionStorage.setItem(KEY, fromLink);
    return { baseUrl: '', token: fromLink, source: 'link' };
  }
  const stored = sessionStorage.getItem(KEY);
  if (stored) return { baseUrl: '', token: stored, source: 'stored' };
  return undefined;
}

export function rememberToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}
