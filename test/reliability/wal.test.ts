// The SQLite WAL must not grow for as long as the server runs. A cached statement
// left mid-step after get() kept a read transaction open, and SQLite cannot checkpoint past an open
// reader: every write then appended to the WAL for good (600 MB over a 4 KB database after 20,000
// job requests). These tests drive real writes through the running server and watch the -wal file.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { createBuild, createProject, registerRunner, requestBuild } from '../helpers/fixtures.ts';
import { http } from '../helpers/http.ts';
import { patchTrace, runnerJson } from '../api/lib.ts';
import { Db } from '../../server/store/sqlite/db.ts';
import { SYNTHETIC } from '../../server/jobs/builtin/synthetic.ts';
import { databaseOf } from '../../server/store/index.ts';
import { waitFor } from '../helpers/wait.ts';

const MiB = 1024 * 1024;
const servers = useServers({}, 'all');

const walSize = (dataDir: string) => {
  try {
    return fs.statSync(path.join(dataDir, 'jobscope.db-wal')).size;
  } catch {
    return 0;
  }
};
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('statements leave no read open', () => {
  it('after get(), all(), run() (of a write and of a SELECT), a finished and an abandoned iterate(), a checkpoint copies the whole WAL back', () => {
    const dir = tempDir();
    const db = new Db(path.join(dir, 'jobscope.db'), { fsync: false, walCheckpointEveryMs: 0 });
    try {
      db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
      for (let i = 0; i < 50; i++) db.run('INSERT INTO t (v) VALUES (?)', [`row ${i}`]);
      expect(db.get<{ v: string }>('SELECT v FROM t WHERE id > ? ORDER BY id', [10])?.v).toBe('row 10');
      expect(db.all('SELECT id FROM t WHERE id < ?', [5])).toHaveLength(4);
      for (const row of db.iterate<{ id: number }>('SELECT id FROM t ORDER BY id')) if (row.id === 3) break;
      // Statements stepped to their end are not reset after use (only get() and an abandoned loop are):
      // they must hold no read either.
      let seen = 0;
      for (const row of db.iterate<{ id: number }>('SELECT id FROM t WHERE id <= ?', [7])) seen += row.id;
      expect(seen).toBe(28);
      // run() steps once: a statement that yields rows stops on its first, so it is reset like get().
      db.run('SELECT id FROM t ORDER BY id');
      db.run('UPDATE t SET v = ? WHERE id = 1', ['changed']);
      // PRAGMA wal_checkpoint answers busy, frames in the WAL, frames checkpointed.
      const r = db.get<{ busy: number; log: number; checkpointed: number }>('PRAGMA wal_checkpoint(PASSIVE)')!;
      expect(r.log).toBeGreaterThan(0);
      expect(r).toEqual({ busy: 0, log: r.log, checkpointed: r.log });
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the WAL stays bounded while the server runs', () => {
  it('50,000 writes (job enqueues and runs, runner polls, builds, trace parts, updates) keep the -wal under 8 MiB', async () => {
    const s = await servers.start();
    const project = await createProject(s, 'wal-soak');
    const runner = await registerRunner(s, project.runners_token);
    const { jobs } = s.server.ctx;
    let writes = 0;
    let maxWal = 0;
    const sample = () => {
      maxWal = Math.max(maxWal, walSize(s.dataDir));
    };

    // Through HTTP, what a runner and a CI script do: builds created, taken, traced, finished, and
    // idle polls in between.
    const httpRound = async (i: number) => {
      await createBuild(s, project.id, { name: `soak-${i}` });
      const taken = await requestBuild(s, runner.token);
      expect(taken.status).toBe(201);
      const build = taken.body as { id: number; token: string };
      const part = Buffer.from(`line ${i}\n`.repeat(20));
      expect((await patchTrace(s, build.id, { token: build.token, range: `0-${part.length - 1}`, body: part })).status).toBe(202);
      const done = await runnerJson(`${s.url}/ci/api/v1/builds/${build.id}.json`, 'PUT', { token: runner.token, state: 'success' });
      expect(done.status).toBe(200);
      expect((await requestBuild(s, runner.token)).status).toBe(204);
      expect((await http(`${s.url}/api/v3/sim/jobs`, { json: { queue: 'soak-http', count: 1 }, token: s.adminToken })).status).toBe(202);
      writes += 5;
    };

    for (let round = 0; writes < 50_000; round++) {
      await httpRound(round);
      // Through the real job system in process: each enqueue is one committed transaction, and the
      // server's worker pool runs and deletes each job (more writes) while the loop yields.
      for (let i = 0; i < 500; i++) {
        jobs.enqueue(SYNTHETIC, { duration_ms: 0 }, { queue: 'soak' });
        writes++;
        if (i % 50 === 0) await turn();
      }
      sample();
    }
    sample();
    expect(writes).toBeGreaterThanOrEqual(50_000);
    console.log(`[wal] ${writes} writes: largest -wal seen ${(maxWal / MiB).toFixed(2)} MiB, database ${(fs.statSync(path.join(s.dataDir, 'jobscope.db')).size / MiB).toFixed(2)} MiB`);
    expect(maxWal).toBeLessThan(8 * MiB);
  });

  it('the checkpoint timer (--wal-checkpoint-every-ms) truncates the WAL to nothing while the server idles', async () => {
    const s = await servers.start({ walCheckpointEveryMs: 100 });
    const { jobs } = s.server.ctx;
    for (let i = 0; i < 300; i++) jobs.enqueue(SYNTHETIC, { duration_ms: 0 }, { queue: 'idle' });
    // Wait for the event, not for a time: the WAL is emptied by a later tick of the timer.
    await waitFor('the WAL emptied', () => walSize(s.dataDir) === 0, 20_000, 50);
    expect(walSize(s.dataDir)).toBe(0);
    // And the data is in the database file, not lost with the WAL.
    expect(databaseOf(s.server.ctx.store).get<{ n: number }>('SELECT count(*) AS n FROM schema_migrations')!.n).toBeGreaterThan(0);
  });
});
