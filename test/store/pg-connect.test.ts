// The PostgreSQL store's connection (server/store/pg/connect.ts): the driver is loaded on the first
// connect and not before (a server on SQLite never pays for it); a connection cut while idle (the
// server restarted, a proxy timed it out) is reported and replaced, not an unhandled 'error' that
// ends the process; a server that accepts and never answers fails at the connect timeout with a
// message that says so.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { connectPg } from '../../server/store/pg/connect.ts';
import { PgStoreError } from '../../server/store/database-url.ts';
import { waitFor } from '../helpers/wait.ts';

const root = path.resolve(import.meta.dirname, '../..');

describe('PostgreSQL store: connecting', () => {
  it('pg is loaded by the first connect, not by importing the store (a SQLite server never loads it)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pglazy-'));
    try {
      const script = path.join(dir, 'lazy.mts');
      // A child process: this test worker may have loaded pg for another test file already.
      fs.writeFileSync(
        script,
        `import { createRequire } from 'node:module';
         const req = createRequire(${JSON.stringify(path.join(root, 'package.json'))});
         const pgModules = () => Object.keys(req.cache).filter((k) => k.includes('/node_modules/pg/')).length;
         const store = await import(${JSON.stringify(pathToFileURL(path.join(root, 'server/store/pg/index.ts')).href)});
         const before = pgModules();
         const err = await store.openPgDatabase('postgres://nobody@127.0.0.1:1/none').then(() => null, (e) => e.code);
         console.log(JSON.stringify({ before, after: pgModules(), err }));`,
      );
      const out = execFileSync(process.execPath, ['--import', 'tsx', script], { cwd: root, encoding: 'utf8' });
      const { before, after, err } = JSON.parse(out.trim().split('\n').pop()!) as { before: number; after: number; err: string };
      expect(err).toBe('ECONNREFUSED');
      expect(before).toBe(0);
      expect(after).toBeGreaterThan(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a server that accepts and never answers fails at the connect timeout, saying what to check', async () => {
    const silent = net.createServer(() => {
      /* accept, say nothing */
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const err = await connectPg(`postgres://jobscope@127.0.0.1:${port}/jobscope`, { connectTimeoutMs: 300 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(PgStoreError);
      expect((err as Error).message).toMatch(
        new RegExp(`^PostgreSQL at postgres://jobscope@127\\.0\\.0\\.1:${port}/jobscope: no answer within the connect timeout \\(.*\\)\\. Check the host, the port and any firewall`),
      );
    } finally {
      silent.close();
    }
  });
});

const missing = postgresMissing();
describe.skipIf(missing)(`PostgreSQL store: a connection cut while idle${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let pg: TestPostgres;
  beforeAll(async () => {
    pg = await startPostgres();
  });
  afterAll(async () => {
    await pg?.stop();
  });

  it('is reported to onIdleError, and the next query gets a new connection', async () => {
    const errors: Error[] = [];
    const pool = await connectPg(pg.url, { applicationName: 'idle-victim', onIdleError: (e) => errors.push(e) });
    try {
      const before = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      expect(pg.psql(`SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'idle-victim') t`).trim()).toBe('1');
      await waitFor("the idle client's error", () => errors.length > 0, 10_000, 20);
      expect(errors[0].message).toMatch(/terminat/i);
      const after = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      expect(after).not.toBe(before);
    } finally {
      await pool.end();
    }
  });
});
