// The embedded database: SQLite compiled to WebAssembly (node-sqlite3-wasm). It loads unchanged in
// plain Node and in Electron with no native rebuild. Its API is synchronous, and Node runs our code on
// one thread, so a transaction is never interleaved with another request: "exactly once" dispatch
// follows from that by construction.
//
// WAL with exclusive locking: commits are appended to the WAL with write(2) before the call returns,
// so an acknowledged write is in the kernel and survives kill -9; `fsync` adds synchronous=FULL for
// power loss as well.
import sqlite from 'node-sqlite3-wasm';
import { MIGRATIONS } from './migrations.ts';

const { Database } = sqlite;
export type SqlValue = string | number | bigint | boolean | null | Uint8Array;
export type Row = Record<string, SqlValue>;
type Params = SqlValue[] | Record<string, SqlValue> | undefined;

type Statement = ReturnType<InstanceType<typeof Database>['prepare']>;

export class Db {
  private readonly db: InstanceType<typeof Database>;
  private readonly statements = new Map<string, Statement>();
  private depth = 0;
  private readonly rollbackListeners: (() => void)[] = [];

  constructor(file: string, opts: { fsync: boolean }) {
    this.db = new Database(file);
    this.db.exec('PRAGMA locking_mode=EXCLUSIVE');
    this.db.get('PRAGMA journal_mode=WAL');
    this.db.exec(`PRAGMA synchronous=${opts.fsync ? 'FULL' : 'NORMAL'}`);
    this.db.exec('PRAGMA foreign_keys=ON');
    this.migrate();
  }

  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
    const done = new Set(this.db.all('SELECT version FROM schema_migrations').map((r) => Number(r.version)));
    MIGRATIONS.forEach((sql, i) => {
      const version = i + 1;
      if (done.has(version)) return;
      this.tx(() => {
        this.db.exec(sql);
        this.db.run('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)', [version, Date.now()]);
      });
    });
  }

  /** Prepared statements are cached: preparing costs more than running on this engine. */
  private stmt(sql: string): Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /**
   * Runs a cached statement. One that failed (disk full) keeps its error: SQLite's reset returns it
   * again and the next bind fails with "Could not reset statement", a 500 on a store that has
   * recovered. So a statement that threw is finalized and dropped, and the next use prepares it anew.
   */
  private use<R>(sql: string, fn: (s: Statement) => R): R {
    const s = this.stmt(sql);
    try {
      return fn(s);
    } catch (err) {
      this.drop(sql, s);
      throw err;
    }
  }

  private drop(sql: string, s: Statement): void {
    this.statements.delete(sql);
    try {
      s.finalize();
    } catch {
      /* finalize reports the same stored error; the statement is gone either way */
    }
  }

  get<T = Row>(sql: string, params?: Params): T | undefined {
    return this.use(sql, (s) => (s.get(params as never) ?? undefined) as T | undefined);
  }

  all<T = Row>(sql: string, params?: Params): T[] {
    return this.use(sql, (s) => s.all(params as never) as T[]);
  }

  *iterate<T = Row>(sql: string, params?: Params): Generator<T> {
    const s = this.stmt(sql);
    try {
      yield* s.iterate(params as never) as Iterable<T>;
    } catch (err) {
      this.drop(sql, s);
      throw err;
    }
  }

  run(sql: string, params?: Params): { changes: number; lastInsertRowid: number } {
    const r = this.use(sql, (s) => s.run(params as never));
    return { changes: r.changes, lastInsertRowid: Number(r.lastInsertRowid) };
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  /** Called after every rolled-back transaction: in-memory caches of rows drop what it may have changed. */
  onRollback(fn: () => void): void {
    this.rollbackListeners.push(fn);
  }

  /** Runs fn in one transaction (nested calls join the outer one). */
  tx<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    this.db.exec('BEGIN IMMEDIATE');
    this.depth++;
    try {
      const out = fn();
      this.db.exec('COMMIT');
      return out;
    } catch (err) {
      // A COMMIT that fails (disk full) leaves the transaction open: roll it back, or every later
      // statement would fail too and the store would not recover once space is back.
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const fn of this.rollbackListeners) fn();
      throw err;
    } finally {
      this.depth--;
    }
  }

  close(): void {
    for (const s of this.statements.values()) s.finalize();
    this.statements.clear();
    if (this.db.isOpen) {
      // Fold the WAL back into the main file so the data dir is one tidy file at rest.
      try {
        this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      } catch {
        /* a read-only or full disk must not stop a clean shutdown */
      }
      this.db.close();
    }
  }
}
