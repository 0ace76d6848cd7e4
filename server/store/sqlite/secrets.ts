// The instance's secrets, kept in the database: the generated admin and registration tokens, created
// once and surviving restarts (the table is named `settings` for history; it holds no user settings).
// Settings live in three other homes: server/config.ts (the schema of every setting: flag, env,
// default), server/settings-api/saved-settings.ts (<data dir>/settings.json, saved from the UI) and
// the renderer's Settings view (renderer/views/settings/).
import type { Db } from './db.ts';

export class Secrets {
  constructor(private readonly db: Db) {}

  get(key: string): string | undefined {
    return this.db.get<{ value: string }>('SELECT value FROM settings WHERE key = ?', [key])?.value;
  }

  set(key: string, value: string): void {
    this.db.run('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', [key, value]);
  }

  /** The stored value, or `make()` stored now. An explicit value overrides and is stored. */
  ensure(key: string, explicit: string | undefined, make: () => string): string {
    if (explicit !== undefined) {
      if (this.get(key) !== explicit) this.set(key, explicit);
      return explicit;
    }
    const found = this.get(key);
    if (found !== undefined) return found;
    const value = make();
    this.set(key, value);
    return value;
  }
}
