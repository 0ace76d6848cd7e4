// Db's row reader (server/store/db.ts readIntegersAsNumbers) gives every value node-sqlite3-wasm's
// own reader gives, of the same type: safe integers as numbers, larger ones as BigInt, floats, text,
// blobs and NULL, in the same column order.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import sqlite from 'node-sqlite3-wasm';
import { Db } from '../../server/store/db.ts';
import { tempDir } from '../helpers/server.ts';

const ROWS = `SELECT * FROM t ORDER BY k`;
let dir: string;
let db: Db;
/** The rows as the library's own reader gives them (read before Db opens the file: it locks it). */
let expected: Record<string, unknown>[];

beforeAll(() => {
  dir = tempDir('row-reader-');
  const file = path.join(dir, 'rows.db');
  // Written and read back with the library alone (rollback journal), then opened by Db.
  const plain = new sqlite.Database(file);
  plain.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, a, b, c)');
  const values: unknown[][] = [
    [0, 9_007_199_254_740_991, -9_007_199_254_740_991, 'text'],
    [0, 9_007_199_254_740_992n, -9_007_199_254_740_993n, 'x'],
    [0, 2n ** 62n, 1.5, null],
    [0, 'long text over sixteen bytes, é ü 字', -0.25, 3],
    [0, new Uint8Array([1, 2, 3]), 'after a blob', 7],
    [0, null, null, null],
    [0, 1e300, -1, ''],
  ];
  values.forEach((v, i) => plain.run('INSERT INTO t (k, a, b, c) VALUES (?, ?, ?, ?)', [i + 1, ...(v.slice(1) as never[])]));
  expected = plain.all(ROWS);
  plain.close();
  db = new Db(file, { fsync: false });
});
afterAll(() => {
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('every row reads as the library reads it, value and type, each time the cached statement runs', () => {
  for (let i = 0; i < 3; i++) {
    const rows = db.all(ROWS);
    expect(rows).toEqual(expected);
    rows.forEach((row, r) => {
      expect(Object.keys(row)).toEqual(Object.keys(expected[r]!));
      for (const k of Object.keys(row)) expect(typeof row[k]).toBe(typeof expected[r]![k]);
    });
  }
  // The cases that must take each path: numbers, a BigInt past 2^53, a blob.
  const rows = db.all(ROWS);
  expect(rows[0]!.a).toBe(9_007_199_254_740_991);
  expect(rows[1]!.a).toBe(9_007_199_254_740_992n);
  expect(rows[1]!.b).toBe(-9_007_199_254_740_993n);
  expect(rows[4]!.a).toEqual(new Uint8Array([1, 2, 3]));
  expect(db.get<{ k: number }>('SELECT k FROM t WHERE k = ?', [3])!.k).toBe(3);
});
