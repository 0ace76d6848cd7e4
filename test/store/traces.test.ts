// The single server's trace files (store/files/traces.ts), on real files: a replace with the bytes the
// trace already holds (a runner's final update carries the whole trace it appended) leaves the file
// as it is; any other replace still writes a new file and renames it over the old one.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { TraceStore } from '../../server/store/files/traces.ts';

let dir: string;
let store: TraceStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-traces-'));
  fs.mkdirSync(path.join(dir, 'tmp'));
  store = new TraceStore(dir, path.join(dir, 'tmp'), { fsync: false, maxBytes: 4 * 2 ** 20 });
});
afterEach(() => {
  store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const appendAll = (id: number, parts: string[]) => {
  let at = 0;
  for (const p of parts) {
    expect(store.append(id, at, Buffer.from(p))).toEqual({ ok: true, length: at + p.length });
    at += p.length;
  }
};
const inode = (id: number) => fs.statSync(store.file(id)).ino;

test('a replace with the bytes already appended keeps the file; a different one of the same length replaces it', () => {
  appendAll(1, ['$ make\n', 'ok\n']);
  const before = inode(1);
  expect(store.replace(1, Buffer.from('$ make\nok\n'))).toEqual({ ok: true, length: 10 });
  expect(inode(1)).toBe(before);
  // Same length, other bytes: a new file, renamed over the old one.
  expect(store.replace(1, Buffer.from('$ make\nKO\n'))).toEqual({ ok: true, length: 10 });
  expect(inode(1)).not.toBe(before);
  expect(fs.readFileSync(store.file(1), 'utf8')).toBe('$ make\nKO\n');
  expect(store.read(1).body?.toString()).toBe('$ make\nKO\n');
  expect(fs.readdirSync(path.join(dir, 'tmp'))).toEqual([]);
});

test('appends go on after a replace that kept the file, and a shorter or longer replace rewrites it', () => {
  appendAll(2, ['abc', 'def']);
  const kept = inode(2);
  store.replace(2, Buffer.from('abcdef'));
  expect(store.append(2, 6, Buffer.from('ghi'))).toEqual({ ok: true, length: 9 });
  expect(inode(2)).toBe(kept);
  expect(fs.readFileSync(store.file(2), 'utf8')).toBe('abcdefghi');
  expect(store.replace(2, Buffer.from('abc'))).toEqual({ ok: true, length: 3 });
  expect(fs.readFileSync(store.file(2), 'utf8')).toBe('abc');
  expect(store.append(2, 3, Buffer.from('!'))).toEqual({ ok: true, length: 4 });
  expect(fs.readFileSync(store.file(2), 'utf8')).toBe('abc!');
});

test('a file cut short outside Jobscope is rewritten whole by a replace of its old length', () => {
  appendAll(3, ['0123456789']);
  fs.truncateSync(store.file(3), 4);
  expect(store.replace(3, Buffer.from('0123456789'))).toEqual({ ok: true, length: 10 });
  expect(fs.readFileSync(store.file(3), 'utf8')).toBe('0123456789');
});

test('with no handle open (released, as at a build’s end) a replace writes the file as before', () => {
  appendAll(4, ['same']);
  store.release(4);
  const before = inode(4);
  expect(store.replace(4, Buffer.from('same'))).toEqual({ ok: true, length: 4 });
  expect(inode(4)).not.toBe(before);
  expect(fs.readFileSync(store.file(4), 'utf8')).toBe('same');
});
