// The PostgreSQL builds adapter (server/store/pg/builds.ts) against the SQLite one it stands in for
// (server/store/sqlite/builds.ts), on a real throwaway cluster, as test/store/pg-adapters.test.ts does for
// runners, projects, users and secrets: one seeded random sequence of builds calls (create, take,
// finish, cancel, stuck, artifacts, lists with filters, counts, token and credential lookups) made to
// both stores must get the same answers at every step. Tokens and their digests are random on each
// side, so they are compared as labels in order of first sight. Date is faked (only Date), so
// created_at, started_at and finished_at must match to the millisecond.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { outcome, TokenLabels, type Outcome } from '../helpers/differential.ts';
import { Prng } from '../../common/prng.ts';
import { Db } from '../../server/store/sqlite/db.ts';
import { Projects } from '../../server/store/sqlite/projects.ts';
import { Runners } from '../../server/store/sqlite/runners.ts';
import type { Runner } from '../../server/store/ports/runner.ts';
import { Builds } from '../../server/store/sqlite/builds.ts';
import type { Build, BuildFilter, BuildStatus, NewBuild } from '../../server/store/ports/build.ts';
import { openPgDatabase, PgBuilds, PgProjects, PgRunners, type PgDatabase } from '../../server/store/pg/index.ts';

const missing = postgresMissing();
const pg = usePostgres();
let dbCount = 0;

const TOKEN_KEYS = new Set(['token', 'runners_token', 'ci_token', 'token_sha', 'runners_token_sha', 'ci_token_sha']);

// The SQLite adapter spreads its whole row into the Build it returns, so its builds carry token_sha
// and the emptied artifacts_listing, which the Build type does not have (nothing reads them); the
// PostgreSQL one returns the type's fields. Credentials (no `token`) keep their digests.
const newLabels = () => new TokenLabels(TOKEN_KEYS, (record, key) => 'token' in record && (key === 'token_sha' || key === 'artifacts_listing'));

interface Side {
  builds: Builds | PgBuilds;
  labels: TokenLabels;
  runners: Runner[];
  /** Build tokens in creation order (the same order on both sides). */
  tokens: string[];
  /** Ids of the builds take() handed out, in order: finish and cancel aim at them too, so both meet running and finished builds. */
  taken: number[];
}

// Projects: 1 and 2 with shared runners, 3 without; 4 lets a build without its own timeout run
// 2^31-1 s (the multiplication that overflows a 32-bit integer in stuck()).
const PROJECTS = [
  { name: 'p1', build_timeout: 60 },
  { name: 'p2', build_timeout: 3600 },
  { name: 'p3', shared_runners_enabled: false, build_timeout: 30 },
  { name: 'p4', build_timeout: 2 ** 31 - 1 },
];
const RUNNERS = [
  { is_shared: true, project_id: null, run_untagged: true, tag_list: [] as string[] },
  { is_shared: true, project_id: null, run_untagged: false, tag_list: ['docker', 'linux'] },
  { is_shared: true, project_id: null, run_untagged: true, tag_list: ['gpu'] },
  { is_shared: false, project_id: 3, run_untagged: true, tag_list: ['docker'] },
  { is_shared: false, project_id: 1, run_untagged: false, tag_list: ['linux', 'gpu'] },
];

async function seedSide(projects: Projects | PgProjects, runners: Runners | PgRunners, builds: Builds | PgBuilds): Promise<Side> {
  for (const p of PROJECTS) await projects.create(p);
  const made: Runner[] = [];
  for (const r of RUNNERS) made.push(await runners.create({ ...r, description: 'r', locked: false, info: {} }));
  return { builds, labels: newLabels(), runners: made, tokens: [], taken: [] };
}

function randomBuild(rnd: Prng, projectId: number): NewBuild {
  return {
    project_id: projectId,
    name: rnd.pick(['rspec', 'lint', 'ünïcode ✓', '']),
    stage: rnd.pick(['test', 'build', 'deploy']),
    ref: rnd.pick(['main', 'feature/x']),
    sha: rnd.pick(['a1', 'b2']),
    before_sha: '0000',
    tag: rnd.chance(0.2),
    commands: rnd.pick(['echo hi', 'make test\nmake lint', '']),
    repo_url: rnd.pick([null, 'https://example.invalid/r.git']),
    variables: [
      { key: 'A', value: '1', public: true },
      { key: 'SECRET', value: 'é "quoted"', public: false },
    ].filter(() => rnd.chance(0.5)),
    options: rnd.pick([{}, { image: 'ruby:3' }, { services: ['redis'], artifacts: { paths: ['out/'], when: 'on_success' }, z: 1, a: [null, 2.5, true] }]),
    timeout: rnd.pick([null, null, 1, 5, 60, 3600]),
    tag_list: ['docker', 'linux', 'gpu'].filter(() => rnd.chance(0.3)),
    depends_on: rnd.chance(0.3) ? [rnd.int(1, 5), rnd.int(1, 5)] : [],
  };
}

type Step = { what: string; run: (s: Side) => Promise<unknown> };

function planStep(rnd: Prng, counts: { builds: number; artifacts: number }, clock: { now: number }): Step {
  const roll = rnd.int(0, 99);
  // Ids that exist, a few past the end, 0, and a fraction (no row, and no throw, on either side).
  const anyId = () => rnd.pick([rnd.int(0, counts.builds + 2), rnd.int(1, Math.max(1, counts.builds)), rnd.int(1, Math.max(1, counts.builds)), 1.5]);
  if (roll < 18) {
    // Project 9 does not exist: that create throws on both sides and must not use up an id.
    const input = randomBuild(rnd, rnd.pick([1, 1, 2, 3, 4, 9]));
    counts.builds++;
    return {
      what: `create(${JSON.stringify(input)})`,
      run: async (s) => {
        const b = await s.builds.create(input);
        s.tokens.push(b.token);
        return b;
      },
    };
  }
  if (roll < 36) {
    const i = rnd.int(0, RUNNERS.length - 1);
    return {
      what: `take(runner ${i + 1})`,
      run: async (s) => {
        const b = await s.builds.take(s.runners[i]);
        if (b) s.taken.push(b.id);
        return b;
      },
    };
  }
  // Often a build take() handed out (the k-th, resolved on each side), so finish and cancel meet
  // running and finished builds, not only pending ones; else any id.
  const aimed = () => {
    const useTaken = rnd.chance(0.6);
    const k = rnd.int(0, 60);
    const id = anyId();
    return { label: useTaken ? `taken #${k}` : String(id), of: (s: Side) => (useTaken && s.taken.length ? s.taken[k % s.taken.length] : id) };
  };
  if (roll < 44) {
    const target = aimed();
    const status = rnd.pick(['success', 'failed'] as const);
    return {
      what: `finish(${target.label}, ${status})`,
      run: async (s) => {
        const id = target.of(s);
        return { id, changed: await s.builds.finish(id, status), row: await s.builds.byId(id) };
      },
    };
  }
  if (roll < 50) {
    const target = aimed();
    return {
      what: `cancel(${target.label})`,
      run: async (s) => {
        const id = target.of(s);
        return { id, changed: await s.builds.cancel(id), row: await s.builds.byId(id) };
      },
    };
  }
  if (roll < 54) {
    const at = clock.now + rnd.pick([0, 1000, 61_000, 4_000_000]);
    return { what: `stuck(now+${at - clock.now})`, run: async (s) => s.builds.stuck(at) };
  }
  if (roll < 62) {
    const id = anyId();
    const n = ++counts.artifacts;
    const a = {
      key: `key-${n}`,
      filename: rnd.pick(['artifacts.zip', 'ünï ✓.zip']),
      size: rnd.pick([0, 1, 123_456, 2 ** 40]),
      expire_at: rnd.pick([null, clock.now - 1000, clock.now, clock.now + 5000, clock.now + 600_000]),
    };
    return {
      what: `setArtifacts(${id}, ${JSON.stringify(a)})`,
      run: async (s) => {
        await s.builds.setArtifacts(id, a);
        return { row: await s.builds.byId(id), keys: await s.builds.artifactKeys() };
      },
    };
  }
  if (roll < 66) {
    const id = anyId();
    return {
      what: `clearArtifacts(${id})`,
      run: async (s) => {
        await s.builds.clearArtifacts(id);
        return { row: await s.builds.byId(id), keys: await s.builds.artifactKeys() };
      },
    };
  }
  if (roll < 70) {
    const at = clock.now + rnd.pick([-2000, 0, 5000, 1_000_000]);
    return { what: `expiredArtifacts(now+${at - clock.now})`, run: async (s) => s.builds.expiredArtifacts(at) };
  }
  if (roll < 80) {
    const f: BuildFilter = {};
    if (rnd.chance(0.4)) f.status = rnd.pick<BuildStatus>(['pending', 'running', 'success', 'failed', 'canceled']);
    if (rnd.chance(0.3)) f.project_id = rnd.int(1, 5);
    if (rnd.chance(0.2)) f.runner_id = rnd.int(1, 6);
    if (rnd.chance(0.3)) f.before_id = rnd.int(1, counts.builds + 2);
    if (rnd.chance(0.4)) f.limit = rnd.pick([0, -3, 1, 3, 5000]);
    return { what: `list(${JSON.stringify(f)})`, run: async (s) => s.builds.list(f) };
  }
  if (roll < 84) return { what: 'countByStatus()', run: async (s) => s.builds.countByStatus() };
  if (roll < 89) {
    const i = rnd.int(0, counts.builds + 1);
    return { what: `byToken(#${i})`, run: async (s) => s.builds.byToken(s.tokens[i] ?? 'no-such-token') };
  }
  if (roll < 93) {
    const id = anyId();
    return { what: `credentials(${id})`, run: async (s) => s.builds.credentials(id) };
  }
  if (roll < 96) {
    const ids = [anyId(), anyId(), anyId()];
    return { what: `byIds(${ids})`, run: async (s) => s.builds.byIds(ids) };
  }
  const ms = rnd.pick([500, 3000, 20_000, 65_000]);
  clock.now += ms;
  const at = clock.now;
  return {
    what: `clock +${ms} ms`,
    run: async () => {
      vi.setSystemTime(at);
    },
  };
}

const isBuild = (v: unknown): v is Build => v !== null && typeof v === 'object' && 'status' in v && 'token' in v;
const nonEmpty = (o: Outcome) => 'ok' in o && Array.isArray(o.ok) && o.ok.length > 0;

describe.skipIf(missing)(`PostgreSQL builds${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a seeded random sequence of builds calls gets the same answers from PostgreSQL as from SQLite, at every step', async () => {
    let steps = 0;
    const seen = { creates: 0, createThrew: 0, takenShared: 0, takenProject: 0, takeNone: 0, finished: 0, finishRefused: 0, canceled: 0, cancelRefused: 0, cancelOfSucceededOrFailed: 0, stuck: 0, expired: 0, listed: 0, credentials: 0, byToken: 0 };
    for (let seed = 1; seed <= 4; seed++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pgbuilds-'));
      const sqlite = new Db(path.join(dir, 'jobscope.db'), { fsync: false });
      const pgdb: PgDatabase = await openPgDatabase(await pg.createDatabase(`bu${++dbCount}`), { max: 2 });
      const clock = { now: Date.UTC(2026, 10, 25, 12, 0, 0) };
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(clock.now);
      try {
        const a = await seedSide(new Projects(sqlite), new Runners(sqlite), new Builds(sqlite));
        const b = await seedSide(new PgProjects(pgdb.pool), new PgRunners(pgdb.pool), new PgBuilds(pgdb.pool));
        const rnd = new Prng(seed);
        const counts = { builds: 0, artifacts: 0 };
        for (let step = 0; step < 300; step++) {
          const plan = planStep(rnd, counts, clock);
          const fromSqlite = await outcome(() => plan.run(a));
          const fromPg = await outcome(() => plan.run(b));
          expect(b.labels.norm(fromPg), `seed ${seed} step ${step}: ${plan.what}`).toEqual(a.labels.norm(fromSqlite));
          steps++;
          const ok = 'ok' in fromSqlite ? fromSqlite.ok : undefined;
          const verb = plan.what.slice(0, plan.what.indexOf('('));
          if (verb === 'create') seen[ok ? 'creates' : 'createThrew']++;
          if (verb === 'take') {
            if (!isBuild(ok)) seen.takeNone++;
            else seen[RUNNERS[Number(plan.what.match(/runner (\d+)/)![1]) - 1].is_shared ? 'takenShared' : 'takenProject']++;
          }
          const changed = (ok as { changed?: boolean } | undefined)?.changed;
          if (verb === 'finish') seen[changed ? 'finished' : 'finishRefused']++;
          if (verb === 'cancel') seen[changed ? 'canceled' : 'cancelRefused']++;
          const row = (ok as { row?: Build } | undefined)?.row;
          if (verb === 'cancel' && !changed && (row?.status === 'success' || row?.status === 'failed')) seen.cancelOfSucceededOrFailed++;
          if (verb === 'stuck' && nonEmpty(fromSqlite)) seen.stuck++;
          if (verb === 'expiredArtifacts' && nonEmpty(fromSqlite)) seen.expired++;
          if (verb === 'list' && nonEmpty(fromSqlite)) seen.listed++;
          if (verb === 'credentials' && ok) seen.credentials++;
          if (verb === 'byToken' && ok) seen.byToken++;
        }
        // And the whole table, read back at the end.
        expect(b.labels.norm(await b.builds.list({ limit: 1000 }))).toEqual(a.labels.norm(a.builds.list({ limit: 1000 })));
      } finally {
        vi.useRealTimers();
        sqlite.close();
        await pgdb.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    // The sequences reached the paths that matter: failed creates, builds handed out by shared and
    // project runners and polls that got none, finishes and cancels both done and refused (cancels of
    // succeeded or failed builds among them), stuck and
    // expired builds found, filtered lists with rows, and lookups that found their build.
    expect(steps).toBe(1200);
    for (const [k, n] of Object.entries(seen)) expect(n, `${k}: ${JSON.stringify(seen)}`).toBeGreaterThan(10);
  });
});
