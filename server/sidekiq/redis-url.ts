// The Redis URL of a sidekiq connection. The password is split off at once and kept like a GitLab
// connection's private_token (stored, never answered, never logged); the URL kept and shown has none.
export interface RedisTarget {
  /** redis:// or rediss:// with user (if any), host, port and db; never a password. */
  url: string;
  /** '' = no AUTH. */
  password: string;
  namespace: string;
}

// A CR/LF would reach the server as lines of their own (the URL parser drops raw ones silently;
// percent-encoded ones come back in the decoded password).
const CONTROL = /[\u0000-\u001f\u007f]/;
const CONTROL_ERROR = 'holds a control character (a line break?); remove it, percent-encoded ones too';

export function normalizeRedisUrl(raw: string): { url: string; password: string } | { error: string } {
  if (CONTROL.test(raw.trim())) return { error: CONTROL_ERROR };
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return { error: `"${redactedUrl(raw)}" is not a URL; write it like redis://127.0.0.1:6379/0` };
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') return { error: `only redis:// and rediss:// (TLS) URLs work, not ${u.protocol}//` };
  if (!u.hostname) return { error: 'the Redis URL needs a host, e.g. redis://127.0.0.1:6379/0' };
  if (u.search || u.hash) return { error: 'the Redis URL takes no query or fragment; give the namespace in its own field' };
  const db = u.pathname.replace(/^\/+/, '');
  if (db !== '' && !/^\d{1,5}$/.test(db)) return { error: `the path of a Redis URL is the database number (0-15 usually), not "/${db}"` };
  const password = decodeURIComponent(u.password);
  if (CONTROL.test(password) || CONTROL.test(decodeURIComponent(u.username))) return { error: CONTROL_ERROR };
  u.password = '';
  const user = u.username ? `${u.username}@` : '';
  return { url: `${u.protocol}//${user}${u.host}/${db === '' ? '0' : String(Number(db))}`, password };
}

/** Scheme, host and port: a stored password is only ever sent to the server it was given for. */
export function redisOrigin(url: string | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return null;
  }
}

export function redisHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the Redis server';
  }
}

/** For messages about a URL a person typed: the password, if any, replaced. */
export function redactedUrl(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, '$1***@').slice(0, 200);
}

/** Warnings like a GitLab token over http: a password over plain redis:// to another machine. */
export function passwordWarnings(url: string | null, hasPassword: boolean, staysLocal: (host: string) => boolean): string[] {
  if (!url || !hasPassword) return [];
  try {
    const u = new URL(url);
    if (u.protocol !== 'redis:' || staysLocal(u.hostname)) return [];
    return [`the Redis password goes to ${u.host} over plain redis://: anyone on the network path can read it; use rediss:// (TLS)`];
  } catch {
    return [];
  }
}
