// One data dir shared by two servers on one PostgreSQL database (no symlinks): each takes
// a slot (instances/<n>.pid) and keeps its own SQLite file (the monitor), UI state, logs and temp
// uploads under it; traces and artifacts are the folder's (pg-server-instances.test.ts uploads an
// archive through one and downloads it through the other in one folder). A SQLite-mode server and a database-mode
// one refuse each other's folder, and a named slot is held once.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, tempDir, type TestServer } from '../helpers/server.ts';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';

const cluster = usePostgres();

describe.skipIf(postgresMissing() !== null)('two servers on one shared data dir', () => {
  let url: string;
  let dir: string;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    url = await cluster.createDatabase('shared_dir');
    dir = tempDir();
    a = await startServer({ dataDir: dir }, { database: url });
    // An upload of a's under way when b starts: b must leave it alone.
    fs.writeFileSync(path.join(dir, 'tmp', '1', 'upload-in-progress'), 'x');
    b = await startServer({ dataDir: dir }, { database: url });
  });
  afterAll(async () => {
    await b?.close({ keepData: true });
    await a?.close();
  });

  it('take slots 1 and 2, each with its own SQLite file, state, logs and temp folder, and nothing per folder', () => {
    const la = a.server.ctx.store.layout;
    const lb = b.server.ctx.store.layout;
    expect([la.instance, lb.instance]).toEqual(['1', '2']);
    for (const [l, n] of [[la, '1'], [lb, '2']] as const) {
      expect(fs.readFileSync(path.join(dir, 'instances', `${n}.pid`), 'utf8')).toBe(String(process.pid));
      expect(fs.existsSync(path.join(dir, 'instances', n, 'jobscope.db'))).toBe(true);
      expect(l.dbFile).toBe(path.join(dir, 'instances', n, 'jobscope.db'));
      expect(l.tmpDir).toBe(path.join(dir, 'tmp', n));
      expect(l.logsDir).toBe(path.join(dir, 'instances', n, 'logs'));
      expect(l.stateDir).toBe(path.join(dir, 'instances', n));
      expect(l.tracesDir).toBe(path.join(dir, 'traces'));
      expect(l.artifactsDir).toBe(path.join(dir, 'artifacts'));
    }
    // The folder-wide SQLite file and pid lock of SQLite mode are not made.
    expect(fs.existsSync(path.join(dir, 'jobscope.db'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'jobscope.pid'))).toBe(false);
    // b's start cleared only its own temp folder.
    expect(fs.readFileSync(path.join(dir, 'tmp', '1', 'upload-in-progress'), 'utf8')).toBe('x');
  });

  it('refuse a SQLite-mode server on the folder while they run, and a held named slot', async () => {
    await expect(startServer({ dataDir: dir })).rejects.toThrow(/shared by servers on a database/);
    await expect(startServer({ dataDir: dir }, { database: url, instance: '2' })).rejects.toThrow(/instance 2 .* in use/);
    await expect(startServer({ dataDir: dir }, { database: url, instance: '../x' })).rejects.toThrow(/letters, digits/);
    // The refused starts took nothing: a and b still hold their slots alone.
    expect(fs.readdirSync(path.join(dir, 'instances')).filter((n) => n.endsWith('.pid')).sort()).toEqual(['1.pid', '2.pid']);
  });

  it('give a restarted server its slot back, its own temp files cleared', async () => {
    await a.close({ keepData: true });
    fs.writeFileSync(path.join(dir, 'tmp', '2', 'b-upload'), 'y');
    a = await startServer({ dataDir: dir }, { database: url });
    expect(a.server.ctx.store.layout.instance).toBe('1');
    expect(fs.existsSync(path.join(dir, 'tmp', '1', 'upload-in-progress'))).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'tmp', '2', 'b-upload'), 'utf8')).toBe('y');
  });
});

describe.skipIf(postgresMissing() !== null)('a folder a SQLite-mode server holds', () => {
  it('is refused to a database-mode server', async () => {
    const url = await cluster.createDatabase('sqlite_held');
    const s = await startServer();
    try {
      await expect(startServer({ dataDir: s.dataDir }, { database: url })).rejects.toThrow(/on its own SQLite store/);
      expect(fs.existsSync(path.join(s.dataDir, 'instances', '1.pid'))).toBe(false);
    } finally {
      await s.close();
    }
  });
});
