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
import { FRESH_SCHEMA, FRESH_SCHEMA_VERSION } from './fresh-schema.ts';
import { sqliteStorageError } from './sqlite-errors.ts';

const { Database } = sqlite;
export type SqlValue = string | number | bigint | boolean | null | Uint8Array;
export type Row = Record<string, SqlValue>;
type Params = SqlValue[] | Record<string, SqlValue> | undefined;

type Statement = ReturnType<InstanceType<typeof Database>['prepare']>;

/** What a WAL that SQLite has reset is cut back to: about one automatic checkpoint's worth (1,000 pages). */
const WAL_KEEP_BYTES = 4 * 1024 * 1024;

// Statements that may stop on a row when run() steps them once (see Db.release). Judged from the
// text once per distinct statement (the statement cache is per text too); a false positive only costs a reset.
const rowsByText = new Map<string, boolean>();
function yieldsRows(sql: string): boolean {
  let rows = rowsByText.get(sql);
  if (rows === undefined) {
    rows = /^\s*(SELECT|PRAGMA|WITH|VALUES|EXPLAIN)\b|\bRETURNING\b/i.test(sql);
    if (rowsByText.size < 1000) rowsByText.set(sql, rows);
  }
  return rows;
}

type Internals = { _ptr: number; _getColumnNames: () => string[] };

/**
 * node-sqlite3-wasm asks SQLite for every column's name on every query (one call into the module
 * and one string copied out per column): for `SELECT *` on builds, 29 of each per poll, more than
 * the row's values. A cached statement's names are kept; the column count (a plain numeric call)
 * is checked each time, since the schema changes only in migrations, run before any statement is
 * cached, but a statement that SQLite re-prepared after a change must not be read with old names.
 * If the library's internals are not there (another version), nothing is changed.
 */
const columnCount = (sqlite as unknown as { _sqlite3_column_count?: (ptr: number) => number })._sqlite3_column_count;
function rememberColumnNames(s: Statement): void {
  const st = s as unknown as Internals;
  const read = st._getColumnNames;
  if (typeof read !== 'function' || typeof columnCount !== 'function' || typeof st._ptr !== 'number') return;
  let names: string[] | undefined;
  st._getColumnNames = function (this: Internals) {
    if (names === undefined || names.length !== columnCount(this._ptr)) names = read.call(this);
    return names;
  };
}

export class Db {
  private readonly db: InstanceType<typeof Database>;
  private readonly statements = new Map<string, Statement>();
  private depth = 0;
  private serial = 0;
  private readonly rollbackListeners: (() => void)[] = [];

  private checkpointTimer: NodeJS.Timeout | null = null;

  /**
   * `walCheckpointEveryMs` > 0 folds the WAL back into the database file on that period and
   * truncates it, so the -wal file is empty whenever the server is idle.
   */
  constructor(file: string, opts: { fsync: boolean; walCheckpointEveryMs?: number }) {
    this.db = new Database(file);
    this.db.exec('PRAGMA locking_mode=EXCLUSIVE');
    this.db.get('PRAGMA journal_mode=WAL');
    this.db.exec(`PRAGMA synchronous=${opts.fsync ? 'FULL' : 'NORMAL'}`);
    this.db.exec('PRAGMA foreign_keys=ON');
    // SQLite's own checkpoint after every commit that takes the WAL past 1,000 pages (its default,
    // set here so nothing turns it off), and a WAL that was reset is cut back to WAL_KEEP_BYTES
    // rather than keeping its largest size on disk.
    this.db.exec('PRAGMA wal_autocheckpoint=1000');
    this.db.exec(`PRAGMA journal_size_limit=${WAL_KEEP_BYTES}`);
    this.migrate();
    const every = opts.walCheckpointEveryMs ?? 0;
    if (every > 0) {
      this.checkpointTimer = setInterval(() => this.checkpoint(), every);
      this.checkpointTimer.unref();
    }
  }

  /**
   * Copies the WAL into the database file and truncates it. Exclusive locking mode leaves this
   * connection the only reader, and every statement is reset after use (see `use`), so nothing
   * holds the checkpoint back. Returns SQLite's answer, or null when it could not run.
   */
  checkpoint(): { busy: number; log: number; checkpointed: number } | null {
    // Inside a transaction (a timer cannot fire there, but a caller could) a checkpoint is refused.
    if (this.depth > 0 || !this.db.isOpen) return null;
    try {
      return this.db.get('PRAGMA wal_checkpoint(TRUNCATE)') as unknown as { busy: number; log: number; checkpointed: number };
    } catch {
      // A full or read-only disk: the WAL keeps the data, and the next tick tries again.
      return null;
    }
  }

  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
    const done = new Set(this.db.all('SELECT version FROM schema_migrations').map((r) => Number(r.version)));
    // A new database (nothing but the table above) gets the schema the migrations would leave in one
    // batch (fresh-schema.ts says why and how it is kept equal).
    if (done.size === 0 && Number(this.db.get("SELECT count(*) AS n FROM sqlite_master WHERE name <> 'schema_migrations'")?.n) === 0) {
      const now = Date.now();
      const versions = Array.from({ length: FRESH_SCHEMA_VERSION }, (_, i) => i + 1);
      this.tx(() => {
        this.db.exec(FRESH_SCHEMA);
        this.db.exec(`INSERT INTO schema_migrations (version, applied_at) VALUES ${versions.map((v) => `(${v}, ${now})`).join(', ')}`);
      });
      for (const v of versions) done.add(v);
    }
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
      rememberColumnNames(s);
      this.statements.set(sql, s);
    }
    return s;
  }

  /**
   * Runs a cached statement. One that failed (disk full) keeps its error: SQLite's reset returns it
   * again and the next bind fails with "Could not reset statement", a 500 on a store that has
   * recovered. So a statement that threw is finalized and dropped, and the next use prepares it anew.
   * `leftMidStep`: the call may stop before the statement's end (get()), so it is reset after (see release).
   */
  private use<R>(sql: string, fn: (s: Statement) => R, leftMidStep = false): R {
    const s = this.stmt(sql);
    let out: R;
    try {
      out = fn(s);
    } catch (err) {
      this.drop(sql, s);
      throw sqliteStorageError(err) ?? err;
    }
    if (leftMidStep) this.release(sql, s);
    return out;
  }

  /**
   * Resets a statement once its caller is done with it. A statement left mid-step (get() reads one
   * row; a loop over iterate() may stop early) keeps its read transaction open, and no checkpoint
   * can pass an open reader: the WAL then grew by every write for as long as the server ran (600 MB
   * over a 4 KB database after 20,000 job requests). node-sqlite3-wasm resets only before the next
   * bind, and its reset is not public API: the version is pinned, and were it gone the statement
   * would be finalized instead (correct, only slower). A statement stepped to its end (run(), all(),
   * an iterate() loop that finished) has already ended its read, so it is not reset twice: the
   * library resets again before the next bind anyway, and each reset is two calls into the WASM module.
   */
  private release(sql: string, s: Statement): void {
    const reset = (s as unknown as { _reset?: () => boolean })._reset;
    if (typeof reset === 'function' && reset.call(s)) return;
    this.drop(sql, s);
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
    return this.use(sql, (s) => (s.get(params as never) ?? undefined) as T | undefined, true);
  }

  all<T = Row>(sql: string, params?: Params): T[] {
    return this.use(sql, (s) => s.all(params as never) as T[]);
  }

  *iterate<T = Row>(sql: string, params?: Params): Generator<T> {
    const s = this.stmt(sql);
    let finished = false;
    try {
      yield* s.iterate(params as never) as Iterable<T>;
      finished = true;
    } catch (err) {
      this.drop(sql, s);
      throw sqliteStorageError(err) ?? err;
    } finally {
      // Reached without `finished` when the caller's loop stops early (the generator's return()).
      if (!finished && !s.isFinalized) this.release(sql, s);
    }
  }

  run(sql: string, params?: Params): { changes: number; lastInsertRowid: number } {
    // run() steps once: a statement that yields rows (a SELECT, a PRAGMA, RETURNING) stops on its first.
    const r = this.use(sql, (s) => s.run(params as never), yieldsRows(sql));
    return { changes: r.changes, lastInsertRowid: Number(r.lastInsertRowid) };
  }

  exec(sql: string): void {
    try {
      this.db.exec(sql);
    } catch (err) {
      throw sqliteStorageError(err) ?? err;
    }
  }

  /** Called after every rolled-back transaction: in-memory caches of rows drop what it may have changed. */
  onRollback(fn: () => void): void {
    this.rollbackListeners.push(fn);
  }

  /** Which transaction is open: a new number at each outer BEGIN, for what is valid only until its end. */
  get txSerial(): number {
    return this.serial;
  }

  /** Runs fn in one transaction (nested calls join the outer one). */
  tx<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    this.serial++;
    // Cached statements, not exec(): exec copies the text into the module and parses it on every
    // call, and a dispatch batch or a job's write runs these two around very little else.
    this.run('BEGIN IMMEDIATE');
    this.depth++;
    try {
      const out = fn();
      this.run('COMMIT');
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
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    this.checkpointTimer = null;
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
