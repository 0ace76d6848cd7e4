// A new database gets server/store/sqlite/fresh-schema.ts in one batch instead of every migration replayed:
// the result must be the database the migrations make, statement text included.
import fs from 'node:fs';
import path from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import { afterAll, describe, expect, it } from 'vitest';
import { Db } from '../../server/store/sqlite/db.ts';
import { MIGRATIONS } from '../../server/store/sqlite/migrations.ts';
import { FRESH_SCHEMA_VERSION } from '../../server/store/sqlite/fresh-schema.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('jobscope-fresh-schema-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

type Raw = InstanceType<typeof sqlite.Database>;

/** What the runner did before fresh-schema.ts, for the first `upTo` migrations. */
function replay(file: string, upTo: number): void {
  const db = new sqlite.Database(file);
  db.exec('PRAGMA locking_mode=EXCLUSIVE');
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  MIGRATIONS.slice(0, upTo).forEach((sql, i) => {
    db.exec('BEGIN IMMEDIATE');
    db.exec(sql);
    db.run('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)', [i + 1, Date.now()]);
    db.exec('COMMIT');
  });
  db.close();
}

/** Everything about a schema two databases must share (rootpage aside: where a table's pages start). */
function shape(file: string) {
  const db: Raw = new sqlite.Database(file);
  // Db leaves the file in WAL mode, which this build of SQLite reads only with the lock held (no -shm).
  db.exec('PRAGMA locking_mode=EXCLUSIVE');
  try {
    return {
      master: db.all('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name'),
      userVersion: db.get('PRAGMA user_version'),
      sequence: db.all('SELECT name, seq FROM sqlite_sequence ORDER BY name'),
      versions: db.all('SELECT version FROM schema_migrations ORDER BY version').map((r) => r.version),
      integrity: db.get('PRAGMA integrity_check'),
    };
  } finally {
    db.close();
  }
}

function openWithDb(file: string): void {
  new Db(file, { fsync: false }).close();
}

describe('fresh schema', () => {
  it('is the schema every migration replayed leaves, text, sequences and versions included', () => {
    const replayed = path.join(dir, 'replayed.db');
    replay(replayed, MIGRATIONS.length);
    const fresh = path.join(dir, 'fresh.db');
    openWithDb(fresh);
    const want = shape(replayed);
    expect(want.versions).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(FRESH_SCHEMA_VERSION).toBeLessThanOrEqual(MIGRATIONS.length);
    expect(shape(fresh)).toEqual(want);
    expect(want.master.length).toBeGreaterThan(20);
  });

  it('is not used for a database that has migrations applied: the rest are replayed onto it', () => {
    const part = path.join(dir, 'part.db');
    replay(part, 3);
    openWithDb(part);
    const whole = path.join(dir, 'whole.db');
    replay(whole, MIGRATIONS.length);
    expect(shape(part)).toEqual(shape(whole));
  });

  it('keeps working through a second open (nothing runs twice)', () => {
    const file = path.join(dir, 'twice.db');
    openWithDb(file);
    openWithDb(file);
    expect(shape(file).versions).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });
});
