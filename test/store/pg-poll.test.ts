// The poll in one statement (pg/take.ts pollBuild): the runner a request read may have been paused
// or deleted by another instance before its take; the statement must then take nothing, lock
// nothing and write no contact. An active runner's contact is written whether or not a build is
// left, and the build comes back with its project.
import { describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { openPgDatabase, PgBuilds, PgProjects, PgRunners } from '../../server/store/pg/index.ts';
import { pollBuild } from '../../server/store/pg/take.ts';
import { contactWrite } from '../../server/store/pg/runners.ts';
import { PgRunnerQueue } from '../../server/store/pg/runner-queue.ts';
import { RunnerQueue } from '../../server/context.ts';
import type { NewBuild } from '../../server/store/ports/build.ts';

const missing = postgresMissing();
const pg = usePostgres();

const build = (project_id: number): NewBuild => ({
  project_id, name: 'rspec', stage: 'test', ref: 'main', sha: 'a', before_sha: 'b', tag: false, commands: 'true',
  repo_url: null, variables: [], options: {}, timeout: null, tag_list: [], depends_on: [],
});

describe.skipIf(missing)(`PostgreSQL poll in one statement${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a runner paused or deleted after the request read it takes nothing and writes no contact; an active one takes, with its project, and records contact', async () => {
    const a = await openPgDatabase(await pg.createDatabase('poll1'), { max: 2 });
    const b = await openPgDatabase(pg.urlFor('poll1'), { max: 2, applicationName: 'instance-b' });
    try {
      const project = await new PgProjects(a.pool).create({ name: 'Alpha' });
      const builds = new PgBuilds(a.pool);
      const first = await builds.create(build(project.id));
      const runnersA = new PgRunners(a.pool);
      const created = await runnersA.create({ description: 'r', is_shared: true, project_id: null, run_untagged: true, locked: false, tag_list: [], info: {} });
      const contactedAt = async (id: number) => (await runnersA.byId(id))?.contacted_at;
      const before = await contactedAt(created.id);

      // Read by "this instance", then paused on the other one.
      const held = (await runnersA.byToken(created.token))!;
      expect(await new PgRunners(b.pool).setActive(created.id, false)).toBe(true);
      const later = (before ?? 0) + 60_000;
      expect(await pollBuild(a.pool, held, contactWrite(held, { version: '1.0' }, later), true)).toEqual({ runnerOk: false });
      // Without a take only `active` is asked, by the contact write's WHERE (the caller read the runner itself).
      expect(await pollBuild(a.pool, held, contactWrite(held, { version: '1.0' }, later), false)).toEqual({ runnerOk: true });
      expect((await builds.byId(first.id))?.status).toBe('pending');
      expect(await contactedAt(created.id)).toBe(before);

      await new PgRunners(b.pool).setActive(created.id, true);
      const outcome = await pollBuild(a.pool, held, contactWrite(held, { version: '1.0' }, later), true);
      expect(outcome.runnerOk).toBe(true);
      const taken = outcome.taken;
      expect(taken?.build.id).toBe(first.id);
      expect(taken?.build.status).toBe('running');
      expect(taken?.build.runner_id).toBe(created.id);
      expect(taken?.project).toEqual(await new PgProjects(a.pool).byId(project.id));
      const after = (await runnersA.byId(created.id))!;
      expect(after.contacted_at).toBe(later);
      expect(after.info).toMatchObject({ version: '1.0' });

      // Nothing left: the contact is still written.
      expect(await pollBuild(a.pool, held, contactWrite(after, undefined, later + 60_000), true)).toEqual({ runnerOk: true });
      expect(await contactedAt(created.id)).toBe(later + 60_000);

      // Deleted on the other instance: the next build stays pending.
      const second = await builds.create(build(project.id));
      expect(await new PgRunners(b.pool).delete(created.id)).toBe(true);
      expect(await pollBuild(a.pool, held, undefined, true)).toEqual({ runnerOk: false });
      expect((await builds.byId(second.id))?.status).toBe('pending');
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('a runner edited after it was read (tags, run_untagged, shared, project) takes nothing, locks nothing and writes no contact', async () => {
    const db = await openPgDatabase(await pg.createDatabase('poll3'), { max: 2 });
    try {
      const projects = new PgProjects(db.pool);
      const alpha = await projects.create({ name: 'Alpha' });
      const beta = await projects.create({ name: 'Beta' });
      const builds = new PgBuilds(db.pool);
      const runners = new PgRunners(db.pool);
      const tagged = await builds.create({ ...build(alpha.id), tag_list: ['docker'] });
      const shared = (await runners.create({ description: 's', is_shared: true, project_id: null, run_untagged: true, locked: false, tag_list: ['docker'], info: {} }))!;
      const own = (await runners.create({ description: 'p', is_shared: false, project_id: alpha.id, run_untagged: true, locked: false, tag_list: ['docker'], info: {} }))!;
      const edits: [string, string, unknown[]][] = [
        ['tags', 'UPDATE runners SET tag_list = $2::jsonb WHERE id = $1', ['["ruby"]']],
        ['run_untagged', 'UPDATE runners SET run_untagged = false WHERE id = $1', []],
        ['shared', 'UPDATE runners SET is_shared = NOT is_shared WHERE id = $1', []],
      ];
      for (const who of [shared, own]) {
        for (const [what, sql, more] of edits) {
          const held = (await runners.byToken(who.token))!;
          const snapshot = (await db.pool.query('SELECT * FROM runners WHERE id = $1', [who.id])).rows[0];
          await db.pool.query(sql, [who.id, ...more]);
          const outcome = await pollBuild(db.pool, held, contactWrite(held, { version: what }, Date.now() + 600_000), true);
          expect([what, outcome]).toEqual([what, { runnerOk: false }]);
          expect((await builds.byId(tagged.id))?.status).toBe('pending');
          expect((await runners.byId(who.id))?.info).not.toMatchObject({ version: what });
          await db.pool.query('UPDATE runners SET tag_list = $2::jsonb, run_untagged = $3, is_shared = $4 WHERE id = $1', [
            who.id, JSON.stringify(snapshot.tag_list), snapshot.run_untagged, snapshot.is_shared,
          ]);
        }
      }
      // A project runner moved to another project.
      const held = (await runners.byToken(own.token))!;
      await db.pool.query('UPDATE runners SET project_id = $2 WHERE id = $1', [own.id, beta.id]);
      expect(await pollBuild(db.pool, held, undefined, true)).toEqual({ runnerOk: false });
      // Unchanged: the take goes ahead.
      const fresh = (await runners.byToken(shared.token))!;
      expect((await pollBuild(db.pool, fresh, undefined, true)).taken?.build.id).toBe(tagged.id);
    } finally {
      await db.close();
    }
  });

  it('with the runner\'s X-GitLab-Last-Update the statement reads the shared counter: it takes nothing while the runner already saw it, and a build pending but not yet committed is neither taken nor hidden behind the counter answered', async () => {
    const db = await openPgDatabase(await pg.createDatabase('poll4'), { max: 3 });
    try {
      const queue = await PgRunnerQueue.open(db.pool, new RunnerQueue());
      const project = await new PgProjects(db.pool).create({ name: 'Alpha' });
      const builds = new PgBuilds(db.pool);
      const runners = new PgRunners(db.pool);
      const runner = (await runners.create({ description: 'r', is_shared: true, project_id: null, run_untagged: true, locked: false, tag_list: [], info: {} }))!;
      const counter = async () => Number((await db.pool.query(`SELECT value FROM settings WHERE key = 'runner_queue_counter'`)).rows[0].value);
      const first = await builds.create(build(project.id));
      await db.pool.query(`UPDATE settings SET value = (value::bigint + 1)::text WHERE key = 'runner_queue_counter'`);
      const c = await counter();
      const valueOf = (n: number) => queue.answered(n);

      // The runner saw this counter: nothing taken, contact written, the counter answered.
      const later = Date.now() + 60_000;
      const quiet = await pollBuild(db.pool, runner, contactWrite(runner, undefined, later), true, queue.seen(valueOf(c)));
      expect(quiet).toEqual({ runnerOk: true, counter: c });
      expect((await builds.byId(first.id))?.status).toBe('pending');
      expect((await runners.byId(runner.id))?.contacted_at).toBe(later);
      // Another epoch's value (a database made anew): the take goes ahead.
      const taken = await pollBuild(db.pool, runner, undefined, true, queue.seen(`other-${c}`));
      expect([taken.taken?.build.id, taken.counter]).toEqual([first.id, c]);

      // A build made pending in a transaction not yet committed, its counter moved (and locked) there.
      const tx = await db.pool.connect();
      try {
        await tx.query('BEGIN');
        const second = await new PgBuilds(tx).create(build(project.id));
        const moved = await queue.tick(tx);
        expect(moved).toBe(c + 1);
        // Not visible to the poll, and the counter it answers is the committed one: the runner
        // holding it looks again once the build commits.
        expect(await pollBuild(db.pool, runner, undefined, true, queue.seen(undefined))).toEqual({ runnerOk: true, counter: c });
        await tx.query('COMMIT');
        const next = await pollBuild(db.pool, runner, undefined, true, queue.seen(valueOf(c)));
        expect([next.taken?.build.id, next.counter]).toEqual([second.id, c + 1]);
      } finally {
        tx.release();
      }
      // A runner that may not take (no project, not shared): its contact, and the counter.
      const own = { ...runner, is_shared: false, project_id: null };
      expect(await pollBuild(db.pool, own, contactWrite(runner, undefined, later + 60_000), true, queue.seen(undefined))).toEqual({ runnerOk: true, counter: c + 1 });
      expect((await runners.byId(runner.id))?.contacted_at).toBe(later + 60_000);
    } finally {
      await db.close();
    }
  });

  it('createMany inserts the builds in id order, each with its own token; for a missing project none, and no id drawn', async () => {
    const db = await openPgDatabase(await pg.createDatabase('poll2'), { max: 2 });
    try {
      const project = await new PgProjects(db.pool).create({ name: 'Beta' });
      const builds = new PgBuilds(db.pool);
      const one = await builds.create(build(project.id));
      await expect(builds.createMany(build(project.id + 1), 3)).rejects.toThrow(/does not exist/);
      const many = await builds.createMany(build(project.id), 5);
      expect(many.map((b) => b.id)).toEqual([1, 2, 3, 4, 5].map((i) => one.id + i));
      expect(new Set(many.map((b) => b.token)).size).toBe(5);
      for (const b of many) expect(await builds.byToken(b.token)).toEqual(b);
      expect(many.every((b) => b.status === 'pending' && b.project_id === project.id && b.name === 'rspec')).toBe(true);
      expect(await builds.createMany(build(project.id), 0)).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
