// Dispatch on PostgreSQL (server/store/pg/take.ts) against a real throwaway cluster:
// - exactly once: many polls at the same moment, on two pools (two instances), hand every build out
//   once, to a runner that may run it, and leave only the builds no runner can run;
// - fair order: the same rows in SQLite and PostgreSQL, the same polls one after another, and each
//   poll is answered with the same build by the SQLite take() (store/sqlite/builds.ts) and takeBuild.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Pool } from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { Prng } from '../../common/prng.ts';
import { Db } from '../../server/store/sqlite/db.ts';
import { Projects } from '../../server/store/sqlite/projects.ts';
import { Runners } from '../../server/store/sqlite/runners.ts';
import type { Runner } from '../../server/store/ports/runner.ts';
import { Builds } from '../../server/store/sqlite/builds.ts';
import { runnerMatches, type Build } from '../../server/store/ports/build.ts';
import { openPgDatabase, takeBuild, type PgDatabase } from '../../server/store/pg/index.ts';
import { POLL_SQL } from '../../server/store/pg/take.ts';

const missing = postgresMissing();
const pg = usePostgres();
let dbCount = 0;
const freshDb = async () => openPgDatabase(await pg.createDatabase(`t${++dbCount}`), { max: 6 });

type Taker = Pick<Runner, 'id' | 'is_shared' | 'project_id' | 'tag_list' | 'run_untagged'>;

describe.skipIf(missing)(`PostgreSQL dispatch: FOR UPDATE SKIP LOCKED${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('16 polls at once on two instances over 400 builds: each build handed out once, to a runner that may run it', async () => {
    const a = await freshDb();
    const b = await openPgDatabase(pg.urlFor(`t${dbCount}`), { max: 6, applicationName: 'instance-b' });
    try {
      const q = a.pool;
      await q.query(`INSERT INTO projects (id, name, runners_token, runners_token_sha, ci_token, ci_token_sha, shared_runners_enabled, created_at)
                     SELECT i, 'p' || i, 'r' || i, 'rs' || i, 'c' || i, 'cs' || i, i <> 5, 0 FROM generate_series(1, 5) i`);
      const runners: Taker[] = [
        { id: 1, is_shared: true, project_id: null, tag_list: [], run_untagged: true },
        { id: 2, is_shared: true, project_id: null, tag_list: [], run_untagged: true },
        { id: 3, is_shared: true, project_id: null, tag_list: ['docker'], run_untagged: true },
        { id: 4, is_shared: true, project_id: null, tag_list: ['docker', 'linux'], run_untagged: false },
        { id: 5, is_shared: true, project_id: null, tag_list: ['linux'], run_untagged: true },
        { id: 6, is_shared: false, project_id: 5, tag_list: [], run_untagged: true },
        { id: 7, is_shared: false, project_id: 5, tag_list: ['docker'], run_untagged: true },
        { id: 8, is_shared: false, project_id: 2, tag_list: ['linux'], run_untagged: false },
      ];
      for (const r of runners) {
        await q.query(`INSERT INTO runners (id, token, token_sha, is_shared, project_id, run_untagged, tag_list, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 0)`, [
          r.id, `rt${r.id}`, `rts${r.id}`, r.is_shared, r.project_id, r.run_untagged, JSON.stringify(r.tag_list),
        ]);
      }
      const rnd = new Prng(13);
      const tagChoices = [[], [], [], ['docker'], ['linux'], ['docker', 'linux'], ['nowhere']];
      const planned = Array.from({ length: 400 }, () => ({ project: rnd.int(1, 5), tags: rnd.pick(tagChoices) }));
      await q.query(
        `INSERT INTO builds (project_id, status, name, stage, ref, sha, before_sha, commands, token, token_sha, created_at, tag_list)
         SELECT x.p, 'pending', 'b' || x.i, 'test', 'main', 'a', 'b', 'true', 't' || x.i, 'ts' || x.i, 0, x.t::jsonb
         FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS x(p, t, i) ORDER BY x.i`,
        [planned.map((p) => p.project), planned.map((p) => JSON.stringify(p.tags))],
      );
      const runnable = (build: { project: number; tags: string[] }) =>
        runners.some((r) => (r.is_shared ? build.project !== 5 : r.project_id === build.project) && runnerMatches(r, { tag_list: build.tags }));
      const expectedIds = planned.flatMap((p, i) => (runnable(p) ? [i + 1] : []));
      expect(expectedIds.length).toBeGreaterThan(250);
      expect(expectedIds.length).toBeLessThan(400);

      const handed: { build: Build; runner: Taker }[] = [];
      let inFlight = 0;
      let maxInFlight = 0;
      const poll = async (pool: Pool, runner: Taker) => {
        // A poll that finds nothing may only have found every build it could run locked by other
        // polls: it stops after two empty answers in a row, as a runner would poll again.
        for (let empty = 0; empty < 2; ) {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          const build = await takeBuild(pool, runner);
          inFlight--;
          if (build) {
            handed.push({ build, runner });
            empty = 0;
          } else empty++;
        }
      };
      await Promise.all(Array.from({ length: 16 }, (_, i) => poll(i % 2 ? b.pool : a.pool, runners[i % runners.length])));
      expect(maxInFlight).toBeGreaterThan(1);

      const ids = handed.map((h) => h.build.id);
      expect(ids.length - new Set(ids).size, 'builds handed out more than once').toBe(0);
      expect([...ids].sort((x, y) => x - y)).toEqual(expectedIds);
      for (const { build, runner } of handed) {
        expect(build.status).toBe('running');
        expect(build.runner_id).toBe(runner.id);
        expect(runnerMatches(runner, build), `build ${build.id} ${JSON.stringify(build.tag_list)} to runner ${runner.id}`).toBe(true);
        expect(runner.is_shared ? build.project_id !== 5 : build.project_id === runner.project_id).toBe(true);
      }
      const { rows } = await q.query<{ id: number; status: string; runner_id: number | null }>('SELECT id, status, runner_id FROM builds ORDER BY id');
      const takerOf = new Map(handed.map((h) => [h.build.id, h.runner.id]));
      for (const r of rows) {
        if (takerOf.has(r.id)) expect(r).toEqual({ id: r.id, status: 'running', runner_id: takerOf.get(r.id) });
        else expect(r).toEqual({ id: r.id, status: 'pending', runner_id: null });
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('polls one after another hand out the same builds in the same order as the SQLite take() (fair order for shared runners)', async () => {
    let takes = 0;
    let hits = 0;
    let fairOverFifo = 0;
    for (let seed = 1; seed <= 8; seed++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pgtake-'));
      const sqlite = new Db(path.join(dir, 'jobscope.db'), { fsync: false });
      const pgdb = await freshDb();
      try {
        const pair = new SameRows(sqlite, pgdb);
        const rnd = new Prng(seed);
        const tags = ['docker', 'linux', 'gpu'];
        const someTags = () => (rnd.chance(0.55) ? [] : tags.filter(() => rnd.chance(0.4)));
        const projects = Array.from({ length: rnd.int(3, 5) }, (_, i) => pair.project(`p${i}`, rnd.chance(0.8)));
        const runners: Runner[] = [
          ...Array.from({ length: rnd.int(2, 4) }, () => pair.runner({ shared: true, tags: tags.filter(() => rnd.chance(0.5)), untagged: rnd.chance(0.75) })),
          ...Array.from({ length: rnd.int(1, 3) }, () => pair.runner({ shared: false, project: rnd.pick(projects), tags: someTags(), untagged: rnd.chance(0.75) })),
        ];
        for (let i = rnd.int(15, 40); i > 0; i--) await pair.build(rnd.pick(projects), someTags());
        for (let step = 0; step < 90; step++) {
          const roll = rnd.next();
          if (roll < 0.55) {
            const runner = rnd.pick(runners);
            const fifo = pair.oldestFor(runner);
            const [fromSqlite, fromPg] = await pair.take(runner);
            takes++;
            expect(fromPg && pick(fromPg), `seed ${seed} step ${step}: runner ${runner.id} (${runner.is_shared ? 'shared' : 'project'})`).toEqual(fromSqlite && pick(fromSqlite));
            if (fromSqlite) hits++;
            if (fromSqlite && fifo !== undefined && fromSqlite.id !== fifo) fairOverFifo++;
          } else if (roll < 0.75) {
            const running = pair.sqliteBuilds.list({ status: 'running', limit: 1000 });
            if (running.length) await pair.finish(rnd.pick(running).id);
          } else if (roll < 0.93) {
            await pair.build(rnd.pick(projects), someTags());
          } else if (roll < 0.97) {
            await pair.setShared(rnd.pick(projects), rnd.chance(0.5));
          } else {
            const pending = pair.sqliteBuilds.list({ status: 'pending', limit: 1000 });
            if (pending.length) await pair.cancel(rnd.pick(pending).id);
          }
        }
      } finally {
        sqlite.close();
        await pgdb.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    // The runs did exercise what is compared: hand-outs, empty polls, and polls where fairness chose
    // another project than the one with the oldest build this runner could run (the seeds are fixed:
    // 390 polls, 220 hand-outs, 62 of them fair over FIFO when written).
    expect(hits).toBeGreaterThan(150);
    expect(takes - hits).toBeGreaterThan(100);
    expect(fairOverFifo).toBeGreaterThan(40);
  });

  it('a poll reads only the pending builds, whatever the statistics: after 300 taken, the prepared poll passes over none of them', async () => {
    // The statistics gathered while every build was pending, and the polls' generic plans made then
    // (a queue filled at once): the plan must still start at the oldest pending build, for a shared
    // runner (the projects' oldest and the take) and for a project runner.
    const db = await freshDb();
    const client = await db.pool.connect();
    try {
      await client.query(`INSERT INTO projects (id, name, runners_token, runners_token_sha, ci_token, ci_token_sha, shared_runners_enabled, created_at)
                          VALUES (1, 'p', 'r', 'rs', 'c', 'cs', true, 0)`);
      await client.query(`INSERT INTO runners (id, token, token_sha, is_shared, project_id, run_untagged, tag_list, created_at)
                          VALUES (1, 'rt1', 'rts1', true, NULL, true, '[]', 0), (2, 'rt2', 'rts2', false, 1, true, '[]', 0)`);
      await client.query(`INSERT INTO settings (key, value) VALUES ('runner_queue_counter', '1')`);
      await client.query(`INSERT INTO builds (project_id, status, name, stage, ref, sha, before_sha, commands, token, token_sha, created_at)
                          SELECT 1, 'pending', 'b' || i, 'test', 'main', 'a', 'b', 'true', 't' || i, 'ts' || i, 0 FROM generate_series(1, 700) i`);
      await client.query('ANALYZE');
      const removedByFilter = (plan: Record<string, unknown>): number =>
        Number(plan['Rows Removed by Filter'] ?? 0) + ((plan.Plans as Record<string, unknown>[] | undefined) ?? []).reduce((n, p) => n + removedByFilter(p), 0);
      for (const [name, text, values] of [
        ['shared', POLL_SQL.shared['quiet-seen'], '(1, \'[]\', true, 0, NULL)'],
        ['project', POLL_SQL.project['quiet-seen'], '(2, \'[]\', true, 0, 1, NULL)'],
      ] as const) {
        await client.query(`PREPARE poll_${name} AS ${text}`);
        for (let i = 0; i < 300; i++) expect((await client.query(`EXECUTE poll_${name}${values}`)).rows[0].id).not.toBeNull();
        const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE poll_${name}${values}`);
        const plan = rows[0]['QUERY PLAN'][0].Plan as Record<string, unknown>;
        expect(removedByFilter(plan), `${name} runner: rows passed over`).toBeLessThan(10);
      }
    } finally {
      client.release();
      await db.close();
    }
  });
});

/** The fields two adapters' Builds must agree on (started_at is each one's clock). */
const pick = (b: Build) => ({
  id: b.id, project_id: b.project_id, runner_id: b.runner_id, status: b.status, name: b.name, tag_list: b.tag_list,
  variables: b.variables, options: b.options, depends_on: b.depends_on, token: b.token, timeout: b.timeout, tag: b.tag,
});

const BOOLEAN_COLUMNS = new Set(['shared_runners_enabled', 'is_shared', 'active', 'run_untagged', 'locked', 'online', 'tag', 'admin', 'enabled', 'truncated']);

/** The same rows in a SQLite store (written by its own classes) and a PostgreSQL one (each row copied over). */
class SameRows {
  readonly sqliteBuilds: Builds;
  private readonly projects: Projects;
  private readonly runners: Runners;
  constructor(
    private readonly sqlite: Db,
    private readonly pg: PgDatabase,
  ) {
    this.sqliteBuilds = new Builds(sqlite);
    this.projects = new Projects(sqlite);
    this.runners = new Runners(sqlite);
  }

  // Copies run one after another, in the order of the SQLite writes (a build's project first).
  private copied: Promise<unknown> = Promise.resolve();
  /** Copies one SQLite row into PostgreSQL, as is (ids kept, 0/1 as booleans, JSON text as json). */
  private copy(table: string, id: number): void {
    const row = this.sqlite.get<Record<string, unknown>>(`SELECT * FROM ${table} WHERE id = ?`, [id])!;
    const cols = Object.keys(row).filter((c) => c !== 'artifacts_listing');
    const values = cols.map((c) => (BOOLEAN_COLUMNS.has(c) ? row[c] === 1 : row[c]));
    const sql = `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`;
    this.copied = this.copied.then(() => this.pg.pool.query(sql, values));
  }
  private async flush(): Promise<void> {
    await this.copied;
  }

  project(name: string, shared: boolean): number {
    const p = this.projects.create({ name, shared_runners_enabled: shared });
    this.copy('projects', p.id);
    return p.id;
  }
  runner(o: { shared: boolean; project?: number; tags: string[]; untagged: boolean }): Runner {
    const r = this.runners.create({ description: '', is_shared: o.shared, project_id: o.shared ? null : o.project!, run_untagged: o.untagged, locked: false, tag_list: o.tags, info: {} });
    this.copy('runners', r.id);
    return r;
  }
  async build(project: number, tags: string[]): Promise<void> {
    const b = this.sqliteBuilds.create({
      project_id: project, name: 'rspec', stage: 'test', ref: 'main', sha: 'a'.repeat(40), before_sha: '0'.repeat(40), tag: false, commands: 'true',
      repo_url: null, variables: [{ key: 'K', value: 'v', public: true }], options: { image: 'ruby:2.3', artifacts: { paths: ['x'] } }, timeout: null,
      tag_list: tags, depends_on: [],
    });
    this.copy('builds', b.id);
    await this.flush();
  }
  async take(runner: Runner): Promise<[Build | undefined, Build | undefined]> {
    await this.flush();
    return [this.sqliteBuilds.take(runner), await takeBuild(this.pg.pool, runner)];
  }
  async finish(id: number): Promise<void> {
    this.sqliteBuilds.finish(id, 'success');
    await this.pg.pool.query(`UPDATE builds SET status = 'success', finished_at = $2 WHERE id = $1 AND status = 'running'`, [id, Date.now()]);
  }
  async cancel(id: number): Promise<void> {
    this.sqliteBuilds.cancel(id);
    await this.pg.pool.query(`UPDATE builds SET status = 'canceled', finished_at = $2 WHERE id = $1 AND status IN ('pending', 'running')`, [id, Date.now()]);
  }
  async setShared(project: number, enabled: boolean): Promise<void> {
    this.sqlite.run('UPDATE projects SET shared_runners_enabled = ? WHERE id = ?', [enabled ? 1 : 0, project]);
    await this.pg.pool.query('UPDATE projects SET shared_runners_enabled = $2 WHERE id = $1', [project, enabled]);
  }
  /** The oldest pending build this runner could run anywhere it may look (plain FIFO, no fairness). */
  oldestFor(runner: Runner): number | undefined {
    const enabled = new Set(this.projects.list().filter((p) => p.shared_runners_enabled).map((p) => p.id));
    return this.sqliteBuilds
      .list({ status: 'pending', limit: 1000 })
      .filter((b) => (runner.is_shared ? enabled.has(b.project_id) : b.project_id === runner.project_id) && runnerMatches(runner, b))
      .map((b) => b.id)
      .sort((x, y) => x - y)[0];
  }
}
