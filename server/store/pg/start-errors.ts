// What the operator reads when the PostgreSQL store cannot start: each failure says what was tried
// (the URL with its password hidden) and what to do next, instead of a driver's bare ECONNREFUSED.
import { PgStoreError, redactUrl } from '../database-url.ts';

interface DriverError {
  code?: string;
  message?: string;
}

/** The error of a failed connect or first query, as one that says what to do next. */
export function explainConnectError(err: unknown, url: string): PgStoreError {
  if (err instanceof PgStoreError) return err;
  const e = (err ?? {}) as DriverError;
  const code = typeof e.code === 'string' ? e.code : '';
  const at = `PostgreSQL at ${redactUrl(url)}`;
  let host = '';
  let user = '';
  let db = '';
  try {
    const u = new URL(url);
    host = `${u.hostname}:${u.port || '5432'}`;
    user = decodeURIComponent(u.username);
    db = decodeURIComponent(u.pathname.replace(/^\//, ''));
  } catch {
    /* checkUrl ran first; a URL that still does not parse is described by the driver's message */
  }
  const say = (text: string) => new PgStoreError(`${at}: ${text}`, code || 'unreachable', { cause: err });
  switch (code) {
    case 'ECONNREFUSED':
      return say(`connection refused (ECONNREFUSED). Is the server running and listening on ${host}? Start it, or fix the host and port in the URL.`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return say(`the host name does not resolve (${code}). Fix the host in the URL.`);
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return say(`no answer from ${host} (${code}). Check the host, the port and any firewall between this machine and the database.`);
    case 'ECONNRESET':
      return say('the server closed the connection (ECONNRESET). Check that the port is PostgreSQL\'s and the server\'s log for why.');
    case '28P01':
      return say(`password authentication failed for user "${user}" (28P01). Fix the user or password in the URL.`);
    case '28000':
      return say(`the server refused user "${user}" (28000: ${e.message ?? ''}). Create the role, or allow it in pg_hba.conf for this host.`);
    case '3D000':
      return say(`database "${db}" does not exist (3D000). Create it (createdb -O ${user || '<user>'} ${db}) or fix its name in the URL.`);
    case '53300':
      return say('the server has no free connection slot (53300). Raise max_connections or lower the pool size of the instances using it.');
    case '57P03':
      return say('the server is starting up or shutting down (57P03). Try again once it accepts connections.');
    case '42501':
      return say(`user "${user}" may not create the tables (42501: ${e.message ?? ''}). Grant it CREATE on the database's public schema, or make it the database's owner.`);
  }
  if (/timeout/i.test(e.message ?? '')) {
    return say(`no answer within the connect timeout (${e.message}). Check the host, the port and any firewall between this machine and the database.`);
  }
  return say(`${e.message || String(err)}${code ? ` (${code})` : ''}. Check the URL and the server's log.`);
}
