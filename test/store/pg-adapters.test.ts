// The PostgreSQL adapters for runners, projects, users and secrets (server/store/pg/{runners,
// projects,users,secrets}.ts) against the SQLite ones they stand in for, on a real throwaway cluster:
// - differential: one seeded random sequence of calls made to both stores, step by step, must get the
//   same answers: ids, fields, booleans, lists in the same order, which calls throw. Tokens are random
//   on each side, so they are compared as labels: the n-th token first seen on one side must be the
//   n-th first seen on the other, wherever it appears again. Date is faked (only Date), so times match.
// - two instances (two pools on one database): ensure() racing on both keeps one value; runners
//   created at once get distinct ids, and a deleted runner's id is never given out again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { outcome, TokenLabels } from '../helpers/differential.ts';
import { Prng } from '../../common/prng.ts';
import { Db } from '../../server/store/sqlite/db.ts';
import { Projects } from '../../server/store/sqlite/projects.ts';
import { Runners } from '../../server/store/sqlite/runners.ts';
import type { Runner, RunnerInfo } from '../../server/store/ports/runner.ts';
import { Users } from '../../server/store/sqlite/users.ts';
import { Secrets } from '../../server/store/sqlite/secrets.ts';
import { openPgDatabase, PgProjects, PgRunners, PgSecrets, PgUsers, type PgDatabase } from '../../server/store/pg/index.ts';

const missing = postgresMissing();
const pg = usePostgres();
let dbCount = 0;
const freshName = () => `ad${++dbCount}`;

const TOKEN_KEYS = new Set(['token', 'runners_token', 'ci_token', 'private_token']);

// The SQLite Users adapter spreads its whole row into the User it returns, so its records carry
// token_sha, which the User type does not have (nothing reads it); the PostgreSQL one returns the type's fields.
const newLabels = () => new TokenLabels(TOKEN_KEYS, (_record, key) => key === 'token_sha');

interface Side {
  runners: Runners | PgRunners;
  projects: Projects | PgProjects;
  users: Users | PgUsers;
  secrets: Secrets | PgSecrets;
  /** Plants a build (any status) handed to `runnerId`, for buildCounts. */
  plantBuild(n: number, projectId: number, runnerId: number | null, status: string): Promise<void>;
  labels: TokenLabels;
  /** The runner objects the "server" holds, by id: what byToken last gave it. */
  held: Map<number, Runner>;
  /** Known tokens by kind, in creation order (the same order on both sides). */
  tokens: { runner: string[]; projectRunners: string[]; projectCi: string[]; user: string[] };
}

function sqliteSide(db: Db): Side {
  return {
    runners: new Runners(db),
    projects: new Projects(db),
    users: new Users(db),
    secrets: new Secrets(db),
    async plantBuild(n, projectId, runnerId, status) {
      db.run(
        `INSERT INTO builds (project_id, runner_id, status, name, stage, ref, sha, before_sha, commands, token, token_sha, created_at)
         VALUES (?, ?, ?, 'b', 'test', 'main', 'a', 'b', 'true', ?, ?, 0)`,
        [projectId, runnerId, status, `bt${n}`, `bts${n}`],
      );
    },
    labels: newLabels(),
    held: new Map(),
    tokens: { runner: [], projectRunners: [], projectCi: [], user: [] },
  };
}

function pgSide(db: PgDatabase): Side {
  return {
    runners: new PgRunners(db.pool),
    projects: new PgProjects(db.pool),
    users: new PgUsers(db.pool),
    secrets: new PgSecrets(db.pool),
    async plantBuild(n, projectId, runnerId, status) {
      await db.pool.query(
        `INSERT INTO builds (project_id, runner_id, status, name, stage, ref, sha, before_sha, commands, token, token_sha, created_at)
         VALUES ($1, $2, $3, 'b', 'test', 'main', 'a', 'b', 'true', $4, $5, 0)`,
        [projectId, runnerId, status, `bt${n}`, `bts${n}`],
      );
    },
    labels: newLabels(),
    held: new Map(),
    tokens: { runner: [], projectRunners: [], projectCi: [], user: [] },
  };
}

const INFO_KEYS = ['name', 'version', 'revision', 'platform', 'architecture', 'executor', 'features'];

function randomInfo(rnd: Prng): RunnerInfo {
  const info: RunnerInfo = {};
  for (const k of INFO_KEYS) {
    if (!rnd.chance(0.3)) continue;
    info[k] = k === 'features' ? { shared: rnd.chance(0.5), variables: rnd.int(0, 3) } : rnd.pick(['1.0', '1.1', 'linux', 'amd64', 'docker', 'shell', 'é ✓', '']);
  }
  return info;
}

/**
 * One call, its arguments drawn from `rnd` once and then made to each side in turn ("the i-th
 * token" resolves to that side's i-th token); run() returns what is compared.
 */
type Step = { what: string; run: (s: Side) => Promise<unknown> };

function planStep(rnd: Prng, counts: { projects: number; runners: number; builds: number }, clock: { now: number }): Step {
  const roll = rnd.int(0, 99);
  const anyRunnerId = () => rnd.int(0, counts.runners + 2);
  if (roll < 8) {
    const input = {
      name: rnd.pick(['alpha', 'beta', 'gamma', 'ünïcode ✓', '']),
      shared_runners_enabled: rnd.pick([undefined, true, false]),
      build_timeout: rnd.pick([undefined, 60, 3600, 86_400, 2 ** 31 - 1, 2 ** 31 + 5, 1.5]),
    };
    counts.projects++;
    return {
      what: `projects.create(${JSON.stringify(input)})`,
      run: async (s) => {
        const p = await s.projects.create(input);
        s.tokens.projectRunners.push(p.runners_token);
        s.tokens.projectCi.push(p.ci_token);
        return p;
      },
    };
  }
  if (roll < 14) {
    const id = rnd.int(0, counts.projects + 1);
    const which = rnd.int(0, 3);
    const i = rnd.int(0, 40);
    return {
      what: `projects lookup ${which} (${id}, #${i})`,
      run: async (s) => {
        if (which === 0) return s.projects.byId(id);
        if (which === 1) return s.projects.byRunnersToken(s.tokens.projectRunners[i] ?? 'no-such-token');
        if (which === 2) return s.projects.byCiToken(s.tokens.projectCi[i] ?? s.tokens.projectRunners[0] ?? 'x');
        return s.projects.list();
      },
    };
  }
  if (roll < 20) {
    // A small pool of names, so some are taken: the create that fails must not move the next id.
    const username = rnd.pick(['root', 'ana', 'bo', 'chen', 'dee']);
    const admin = rnd.chance(0.3);
    return {
      what: `users.create(${username}, ${admin})`,
      run: async (s) => {
        const u = await s.users.create(username, admin);
        s.tokens.user.push(u.private_token);
        return u;
      },
    };
  }
  if (roll < 25) {
    const which = rnd.int(0, 2);
    const username = rnd.pick(['root', 'ana', 'zed']);
    const i = rnd.int(0, 6);
    return {
      what: `users lookup ${which} (${username}, #${i})`,
      run: async (s) => {
        if (which === 0) return s.users.byUsername(username);
        if (which === 1) return s.users.byToken(s.tokens.user[i] ?? s.tokens.runner[0] ?? 'x');
        return s.users.list();
      },
    };
  }
  if (roll < 37) {
    // project_id: none (shared), an existing project, or one that does not exist (the create throws, and must not use up an id).
    const kind = rnd.int(0, 5);
    const projectPick = rnd.int(1, counts.projects + 2);
    const input = {
      description: rnd.pick(['', 'docker runner', 'shell ✓', 'x'.repeat(300)]),
      is_shared: kind <= 1,
      run_untagged: rnd.chance(0.7),
      locked: rnd.chance(0.3),
      tag_list: ['docker', 'linux', 'gpu', 'docker'].filter(() => rnd.chance(0.4)),
      info: randomInfo(rnd),
      active: rnd.pick([undefined, true, false]),
    };
    const projectId = kind <= 1 ? null : projectPick;
    counts.runners++;
    return {
      what: `runners.create(project ${projectId}, ${JSON.stringify(input)})`,
      run: async (s) => {
        const r = await s.runners.create({ ...input, project_id: projectId });
        s.tokens.runner.push(r.token);
        return r;
      },
    };
  }
  if (roll < 62) {
    // A poll, as the runner API makes it: byToken, stillActive, touch (with or without its info).
    const i = rnd.int(0, counts.runners + 1);
    const stranger = rnd.int(0, 9);
    const info = rnd.pick([undefined, {}, randomInfo(rnd)]);
    return {
      what: `poll(#${i}, stranger ${stranger}, info ${JSON.stringify(info)})`,
      run: async (s) => {
        const token = stranger === 0 ? (s.tokens.projectRunners[0] ?? 'x') : stranger === 1 ? 'no-such-token' : (s.tokens.runner[i] ?? 'no-such-token');
        const r = await s.runners.byToken(token);
        if (!r) return { found: false };
        s.held.set(r.id, r);
        const active = await s.runners.stillActive(r);
        const before = r.contacted_at;
        await s.runners.touch(r, info);
        return { found: true, active, wrote: r.contacted_at !== before, after: { ...r, info: { ...r.info } }, row: await s.runners.byId(r.id) };
      },
    };
  }
  if (roll < 66) {
    const id = anyRunnerId();
    return { what: `stillActive(held ${id})`, run: async (s) => (s.held.has(id) ? s.runners.stillActive(s.held.get(id)!) : 'not held') };
  }
  if (roll < 71) {
    const id = anyRunnerId();
    const active = rnd.chance(0.5);
    return { what: `setActive(${id}, ${active})`, run: async (s) => s.runners.setActive(id, active) };
  }
  if (roll < 75) {
    const before = clock.now - rnd.int(0, 8000);
    return { what: `markOffline(now-${clock.now - before})`, run: async (s) => s.runners.markOffline(before) };
  }
  if (roll < 79) {
    const id = anyRunnerId();
    return { what: `delete(${id})`, run: async (s) => s.runners.delete(id) };
  }
  if (roll < 83) {
    const which = rnd.int(0, 1);
    const id = anyRunnerId();
    return { what: `runners ${which ? 'list' : `byId(${id})`}`, run: async (s) => (which ? s.runners.list() : s.runners.byId(id)) };
  }
  if (roll < 88) {
    // A build handed to any runner ever made (deleted ones included: their builds keep the id), or to none.
    const runnerId = rnd.chance(0.2) ? null : rnd.int(1, Math.max(1, counts.runners));
    const status = rnd.pick(['pending', 'running', 'success', 'failed', 'canceled']);
    const projectPick = rnd.int(1, Math.max(1, counts.projects));
    const n = ++counts.builds;
    const id = anyRunnerId();
    return {
      what: `plant build ${n} (runner ${runnerId}, ${status}), counts`,
      run: async (s) => {
        const projects = await s.projects.list();
        if (projects.length === 0) return 'no project';
        await s.plantBuild(n, projects[(projectPick - 1) % projects.length].id, runnerId, status);
        return { all: await s.runners.buildCounts(), one: await s.runners.buildCount(id) };
      },
    };
  }
  if (roll < 96) {
    const key = rnd.pick(['admin_token', 'registration_token', 'other']);
    const which = rnd.int(0, 2);
    const explicit = rnd.pick([undefined, undefined, 'given-a', 'given-b']);
    const value = `v${rnd.int(0, 99)}`;
    return {
      what: `secrets ${['get', 'set', 'ensure'][which]}(${key}, ${explicit ?? value})`,
      run: async (s) => {
        if (which === 0) return s.secrets.get(key);
        if (which === 1) return s.secrets.set(key, value);
        let made = 0;
        const got = await s.secrets.ensure(key, explicit, () => {
          made++;
          return `made-${value}`;
        });
        return { got, made, stored: await s.secrets.get(key) };
      },
    };
  }
  const ms = rnd.pick([500, 1000, 2999, 3000, 4000, 20_000]);
  clock.now += ms;
  const at = clock.now;
  return {
    what: `clock +${ms} ms`,
    run: async () => {
      vi.setSystemTime(at);
    },
  };
}

describe.skipIf(missing)(`PostgreSQL runners, projects, users, secrets${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a seeded random sequence of calls gets the same answers from the PostgreSQL adapters as from the SQLite ones, at every step', async () => {
    let steps = 0;
    const seen = { throws: 0, touchesWritten: 0, touchesSkipped: 0 };
    for (let seed = 1; seed <= 4; seed++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pgadapters-'));
      const sqlite = new Db(path.join(dir, 'jobscope.db'), { fsync: false });
      const pgdb = await openPgDatabase(await pg.createDatabase(freshName()), { max: 2 });
      const clock = { now: Date.UTC(2026, 10, 25, 12, 0, 0) };
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(clock.now);
      try {
        const a = sqliteSide(sqlite);
        const b = pgSide(pgdb);
        const rnd = new Prng(seed);
        const counts = { projects: 0, runners: 0, builds: 0 };
        for (let step = 0; step < 400; step++) {
          const plan = planStep(rnd, counts, clock);
          const fromSqlite = await outcome(() => plan.run(a));
          const fromPg = await outcome(() => plan.run(b));
          const where = `seed ${seed} step ${step}: ${plan.what}`;
          expect(b.labels.norm(fromPg), where).toEqual(a.labels.norm(fromSqlite));
          steps++;
          if ('threw' in fromSqlite) seen.throws++;
          const poll = 'ok' in fromSqlite && plan.what.startsWith('poll') ? (fromSqlite.ok as { found: boolean; wrote?: boolean }) : undefined;
          if (poll?.found) seen[poll.wrote ? 'touchesWritten' : 'touchesSkipped']++;
        }
        // And the tables as a whole, read back at the end.
        for (const s of [a, b]) s.held.clear();
        expect(b.labels.norm(await b.runners.list())).toEqual(a.labels.norm(a.runners.list()));
        expect(b.labels.norm(await b.projects.list())).toEqual(a.labels.norm(a.projects.list()));
        expect(b.labels.norm(await b.users.list())).toEqual(a.labels.norm(a.users.list()));
      } finally {
        vi.useRealTimers();
        sqlite.close();
        await pgdb.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    // The sequences reached the paths that matter: failed creates (taken names, missing projects),
    // and polls of found runners both written and skipped by the contact throttle.
    expect(steps).toBe(1600);
    expect(seen.throws, JSON.stringify(seen)).toBeGreaterThan(10);
    expect(seen.touchesWritten, JSON.stringify(seen)).toBeGreaterThan(20);
    expect(seen.touchesSkipped, JSON.stringify(seen)).toBeGreaterThan(20);
  });

  it('two instances calling secrets.ensure() at once for the same keys all get one value, the one stored', async () => {
    const name = freshName();
    const a = await openPgDatabase(await pg.createDatabase(name), { max: 8, applicationName: 'instance-a' });
    const b = await openPgDatabase(pg.urlFor(name), { max: 8, applicationName: 'instance-b' });
    try {
      const sa = new PgSecrets(a.pool);
      const sb = new PgSecrets(b.pool);
      const keys = Array.from({ length: 30 }, (_, i) => `key${i}`);
      let made = 0;
      const results = await Promise.all(
        keys.flatMap((key) =>
          [sa, sb, sa, sb].map(async (s, i) => ({
            key,
            value: await s.ensure(key, undefined, () => {
              made++;
              return `${key}-by-${i}`;
            }),
          })),
        ),
      );
      for (const key of keys) {
        const values = new Set(results.filter((r) => r.key === key).map((r) => r.value));
        expect(values.size, key).toBe(1);
        expect([...values][0]).toBe(await sb.get(key));
      }
      // Several callers did find the key missing and made a value: the race was there to lose.
      expect(made).toBeGreaterThan(keys.length);

      // The losing path made certain: instance b's insert of the key is open (not committed) when
      // instance a looks, so a finds nothing, makes a value, and its insert waits on b's row. Once b
      // commits, a must answer b's value, read in a statement after the wait.
      const held = await b.pool.connect();
      try {
        await held.query('BEGIN');
        await held.query("INSERT INTO settings (key, value) VALUES ('late', 'from-b')");
        const fromA = sa.ensure('late', undefined, () => 'from-a');
        for (;;) {
          const { rows } = await b.pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = 'instance-a' AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO settings%'",
          );
          if (rows.length) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        await held.query('COMMIT');
        expect(await fromA).toBe('from-b');
      } finally {
        held.release();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('two instances creating runners at once get distinct ids, and a deleted runner\'s id is never given out again', async () => {
    const name = freshName();
    const a = await openPgDatabase(await pg.createDatabase(name), { max: 6, applicationName: 'instance-a' });
    const b = await openPgDatabase(pg.urlFor(name), { max: 6, applicationName: 'instance-b' });
    try {
      const ra = new PgRunners(a.pool);
      const rb = new PgRunners(b.pool);
      const input = { description: 'r', is_shared: true, project_id: null, run_untagged: true, locked: false, tag_list: [], info: {} };
      const made = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? ra : rb).create(input)));
      const ids = made.map((r) => r.id);
      expect(new Set(ids).size).toBe(40);
      expect(new Set(made.map((r) => r.token)).size).toBe(40);
      const highest = Math.max(...ids);
      expect(await ra.delete(highest)).toBe(true);
      const next = await rb.create(input);
      expect(next.id).toBeGreaterThan(highest);
      // Each instance reads what the other wrote: no cache on either side hides a pause or a delete.
      const one = (await ra.byToken(made[0].token))!;
      expect(await rb.setActive(one.id, false)).toBe(true);
      expect(await ra.stillActive(one)).toBe(false);
      expect((await ra.byToken(made[0].token))?.active).toBe(false);
      expect(await rb.delete(one.id)).toBe(true);
      expect(await ra.byToken(made[0].token)).toBeUndefined();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
