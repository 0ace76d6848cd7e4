// Build options nested deeper than a request may send (MAX_JSON_DEPTH, 64), in a row an older
// version or a hand wrote: the SQLite adapter reads them as {} (the answer would overflow whoever
// serializes it), and the PostgreSQL one must read them the same way, through every read path
// (byId, list, take). Rows are planted with SQL on both stores; the answers are compared with each
// other and with what is expected, and a row exactly at the bound keeps its options.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { Db } from '../../server/store/sqlite/db.ts';
import { Projects } from '../../server/store/sqlite/projects.ts';
import { Runners } from '../../server/store/sqlite/runners.ts';
import { Builds } from '../../server/store/sqlite/builds.ts';
import { MAX_JSON_DEPTH } from '../../server/util/json-depth.ts';
import { openPgDatabase, PgBuilds, PgProjects, PgRunners } from '../../server/store/pg/index.ts';

const missing = postgresMissing();
const pg = usePostgres();

/** An object nesting `depth` levels: objects at odd levels, arrays at even ones ({"a":[{"a":[…]}]}). */
function nested(depth: number): string {
  let text = depth % 2 ? '{}' : '[]';
  for (let level = depth - 1; level >= 1; level--) text = level % 2 ? `{"a":${text}}` : `[${text}]`;
  return text;
}

const INSERT = `INSERT INTO builds (project_id, status, name, stage, ref, sha, before_sha, commands, options, token, token_sha, created_at)
  VALUES (1, 'pending', 'b', 'test', 'main', 'a1b2c3d4', '0000', 'true', OPTIONS, TOKEN, TOKEN, 0)`;

describe.skipIf(missing)(`PostgreSQL build options nesting${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('options nested past 64 levels read as {} from PostgreSQL as from SQLite; at 64 levels they are kept', async () => {
    const depths = [MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 5000];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pgopts-'));
    const sqlite = new Db(path.join(dir, 'jobscope.db'), { fsync: false });
    const pgdb = await openPgDatabase(await pg.createDatabase('opts'), { max: 2 });
    try {
      new Projects(sqlite).create({ name: 'p' });
      await new PgProjects(pgdb.pool).create({ name: 'p' });
      depths.forEach((depth, i) => {
        const t = `'t${i}'`;
        sqlite.run(INSERT.replace('OPTIONS', `'${nested(depth)}'`).replaceAll('TOKEN', t));
        pg.psql(INSERT.replace('OPTIONS', `'${nested(depth)}'::json`).replaceAll('TOKEN', t), 'opts');
      });
      const a = new Builds(sqlite);
      const b = new PgBuilds(pgdb.pool);
      const kept = (o: Record<string, unknown>) => Object.keys(o).length > 0;
      for (const [i, depth] of depths.entries()) {
        const fromSqlite = a.byId(i + 1)!;
        const fromPg = (await b.byId(i + 1))!;
        expect(kept(fromSqlite.options), `SQLite, depth ${depth}`).toBe(depth <= MAX_JSON_DEPTH);
        expect(fromPg.options, `depth ${depth}`).toEqual(fromSqlite.options);
      }
      const strip = (list: { options: unknown; id: number }[]) => list.map((x) => ({ id: x.id, options: x.options }));
      expect(strip(await b.list())).toEqual(strip(a.list()));
      // take() hands out the oldest first: the one kept at 63 levels, then 64, then the two read as {}.
      const ra = new Runners(sqlite).create({ description: 'r', is_shared: true, project_id: null, run_untagged: true, locked: false, tag_list: [], info: {} });
      const rb = await new PgRunners(pgdb.pool).create({ description: 'r', is_shared: true, project_id: null, run_untagged: true, locked: false, tag_list: [], info: {} });
      for (const depth of depths) {
        const fromPg = (await b.take(rb))!;
        expect(fromPg.options, `take, depth ${depth}`).toEqual(a.take(ra)!.options);
        expect(kept(fromPg.options), `take, depth ${depth}`).toBe(depth <= MAX_JSON_DEPTH);
      }
    } finally {
      sqlite.close();
      await pgdb.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
