// The --database URL, checked before anything connects and shown with its password hidden, and the
// error a store that cannot start raises: what config.ts and cli.ts need of it without loading an adapter.

/** A failure to reach or use the database that the operator must fix; the message says how. */
export class PgStoreError extends Error {
  constructor(
    message: string,
    /** ECONNREFUSED, 28P01, schema-newer…: for callers and tests that branch on the kind. */
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PgStoreError';
  }
}

/** The URL as it may be shown: the password replaced by ***, nothing else changed. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    // Only a postgres:// URL with a host says where its password is: `u:pw@h/db` parses with `u:`
    // as its scheme and the password in its path, so any other shape is shown by its scheme alone.
    if ((u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') || !u.host) return `(a ${u.protocol} URL, not shown)`;
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    // Not a URL at all: show none of it, it may hold a password in any form.
    return '(an unreadable database URL)';
  }
}

/** Throws a PgStoreError unless `url` is a postgres:// or postgresql:// URL naming a database. */
export function checkUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new PgStoreError(
      'The database URL is not a URL: write it as postgres://user:password@host:5432/database, with any @ : / # ? or space in the user or password percent-encoded (%40 for @).',
      'bad-url',
    );
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new PgStoreError(`The database URL ${redactUrl(url)} is not a postgres:// URL: write it as postgres://user:password@host:5432/database.`, 'bad-url');
  }
  if (u.pathname.replace(/^\//, '') === '') {
    throw new PgStoreError(`The database URL ${redactUrl(url)} names no database: add it after the port, e.g. postgres://user@host:5432/jobscope.`, 'bad-url');
  }
}
