// The instance's secrets (the `settings` table) on PostgreSQL: SecretsPort of store/ports/ports.ts,
// asynchronous, with the semantics of store/sqlite/secrets.ts. Not wired to serve yet (see index.ts).
//
// ensure() is called by every instance as it starts, and instances often start together: each must
// end up with the same admin and registration tokens. The generated value is inserted with ON
// CONFLICT DO NOTHING and the stored value is then read back in a statement of its own: the insert
// that loses waits for the winner's commit, and under READ COMMITTED the next statement sees the
// winner's row. (A read in the same statement would use the snapshot taken before that commit.)
import type { Queryable } from './connect.ts';
import type { SecretsPortAsync } from '../ports/async-ports.ts';

export class PgSecrets implements SecretsPortAsync {
  constructor(private readonly db: Queryable) {}

  async get(key: string): Promise<string | undefined> {
    const { rows } = await this.db.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [key]);
    return rows[0]?.value;
  }

  async set(key: string, value: string): Promise<void> {
    await this.db.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [key, value]);
  }

  /** The stored value, or `make()` stored now (the first instance's, when several race). An explicit value overrides and is stored. */
  async ensure(key: string, explicit: string | undefined, make: () => string): Promise<string> {
    if (explicit !== undefined) {
      if ((await this.get(key)) !== explicit) await this.set(key, explicit);
      return explicit;
    }
    const found = await this.get(key);
    if (found !== undefined) return found;
    const value = make();
    const { rows } = await this.db.query<{ value: string }>('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING value', [key, value]);
    if (rows.length) return rows[0].value;
    const stored = await this.get(key);
    // Only a delete between the two statements gets here; nothing deletes settings rows but a wipe.
    if (stored === undefined) throw new Error(`settings: ${key} was removed while it was being created`);
    return stored;
  }
}
