// The bare durable reference for dispatch (bench/dispatch.ts): the plain node:http server of
// dispatch-server.ts, but each poll claims its build in SQLite as ours must, with the same engine
// (node-sqlite3-wasm) and the same settings as server/store/sqlite/db.ts (WAL, exclusive locking,
// synchronous=NORMAL): one textbook statement per POST, in its own transaction,
//   UPDATE … WHERE id = (SELECT id … WHERE status = 'pending' ORDER BY id LIMIT 1) RETURNING …,
// answered after its commit, JSON of about the size of a BuildDetails answer, 204 when none is left.
// No routing library, no runner lookup, no contact write, no fair order across projects, no batching
// of commits: what "a poll hands out a build durably" costs on this engine before any of ours runs.
// Usage: dispatch-server-sqlite.ts <n> <dir>
import fs from 'node:fs';
import path from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import { serveClaims } from './claim-server.ts';

const { Database } = sqlite;

const total = Number(process.argv[2] ?? 10_000);
const dir = process.argv[3] ?? fs.mkdtempSync(path.join(process.cwd(), '.tmp-dispatch-sqlite-'));
const db = new Database(path.join(dir, 'bare-dispatch.sqlite3'));
db.exec('PRAGMA locking_mode=EXCLUSIVE');
db.get('PRAGMA journal_mode=WAL');
db.exec('PRAGMA synchronous=NORMAL');
db.exec(`CREATE TABLE builds (id INTEGER PRIMARY KEY, status TEXT NOT NULL, token TEXT NOT NULL, runner TEXT, started_at INTEGER);
  CREATE INDEX builds_pending ON builds (status, id)`);
db.exec('BEGIN');
const insert = db.prepare("INSERT INTO builds (status, token) VALUES ('pending', ?)");
for (let i = 0; i < total; i++) insert.run([`token-${i.toString(36).padStart(16, '0')}`]);
insert.finalize();
db.exec('COMMIT');
const claim = db.prepare(
  `UPDATE builds SET status = 'running', runner = ?, started_at = ?
   WHERE id = (SELECT id FROM builds WHERE status = 'pending' ORDER BY id LIMIT 1) RETURNING id, token`,
);
serveClaims(
  (token) => claim.get([token, Date.now()]) as { id: number; token: string } | null,
  () => {
    claim.finalize();
    db.close();
  },
);
