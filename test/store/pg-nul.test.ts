// Why the API refuses U+0000 in stored text (server/http/stored-text.ts, test/api/stored-text.test.ts):
// on a real cluster, PostgreSQL's text and jsonb columns refuse it where SQLite stores it, so a
// request accepted on one store would fail on the other. json columns (runner info, build options
// and variables) take it as an escape; the API refuses it there too, for one rule a client can
// know without knowing the column types. The other control characters are stored alike by both.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { Db } from '../../server/store/sqlite/db.ts';
import { Projects } from '../../server/store/sqlite/projects.ts';
import { Runners } from '../../server/store/sqlite/runners.ts';
import type { NewRunner } from '../../server/store/ports/runner.ts';
import { Builds } from '../../server/store/sqlite/builds.ts';
import type { NewBuild } from '../../server/store/ports/build.ts';
import { openPgDatabase, PgBuilds, PgProjects, PgRunners } from '../../server/store/pg/index.ts';

const missing = postgresMissing();
const pg = usePostgres();

const RUNNER: NewRunner = { description: 'r', is_shared: true, project_id: null, active: true, run_untagged: true, locked: false, tag_list: [], info: {} };
const BUILD: NewBuild = {
  project_id: 1, name: 'b', stage: 'test', ref: 'main', sha: 'a1b2c3d4', before_sha: '0000', tag: false, commands: 'true',
  repo_url: null, variables: [], options: {}, timeout: null, tag_list: [], depends_on: [],
};

describe.skipIf(missing)(`U+0000 on PostgreSQL and SQLite${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('text and jsonb columns refuse U+0000 on PostgreSQL and take it on SQLite; json columns take it on both; other control characters are stored alike', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pgnul-'));
    const sqlite = new Db(path.join(dir, 'jobscope.db'), { fsync: false });
    const pgdb = await openPgDatabase(await pg.createDatabase('nul'), { max: 2 });
    try {
      const sq = { projects: new Projects(sqlite), runners: new Runners(sqlite), builds: new Builds(sqlite) };
      const pq = { projects: new PgProjects(pgdb.pool), runners: new PgRunners(pgdb.pool), builds: new PgBuilds(pgdb.pool) };
      sq.projects.create({ name: 'p' });
      await pq.projects.create({ name: 'p' });
      const refusedByPg: [string, () => unknown, () => Promise<unknown>][] = [
        ['project name (text)', () => sq.projects.create({ name: 'a\u0000' }), () => pq.projects.create({ name: 'a\u0000' })],
        ['runner description (text)', () => sq.runners.create({ ...RUNNER, description: 'a\u0000' }), () => pq.runners.create({ ...RUNNER, description: 'a\u0000' })],
        ['runner tag_list (jsonb)', () => sq.runners.create({ ...RUNNER, tag_list: ['a\u0000'] }), () => pq.runners.create({ ...RUNNER, tag_list: ['a\u0000'] })],
        ['build commands (text)', () => sq.builds.create({ ...BUILD, commands: '\u0000' }), () => pq.builds.create({ ...BUILD, commands: '\u0000' })],
        ['build tag_list (jsonb)', () => sq.builds.create({ ...BUILD, tag_list: ['\u0000'] }), () => pq.builds.create({ ...BUILD, tag_list: ['\u0000'] })],
      ];
      for (const [what, onSqlite, onPg] of refusedByPg) {
        expect(() => onSqlite(), what).not.toThrow();
        await expect(onPg(), what).rejects.toThrow();
      }
      const info = { version: '1.0\u0000' };
      expect((await pq.runners.create({ ...RUNNER, info })).info).toEqual(info);
      expect(sq.runners.create({ ...RUNNER, info }).info).toEqual(info);
      const options = { image: 'a\u0000' };
      expect((await pq.builds.create({ ...BUILD, options })).options).toEqual(options);
      expect(sq.builds.create({ ...BUILD, options }).options).toEqual(options);
      const controls = 'a\u0001\u001f\u007f\uFFFDb';
      expect((await pq.runners.create({ ...RUNNER, description: controls, tag_list: [controls] })).description).toBe(controls);
      expect(sq.runners.create({ ...RUNNER, description: controls, tag_list: [controls] }).description).toBe(controls);
    } finally {
      sqlite.close();
      await pgdb.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
