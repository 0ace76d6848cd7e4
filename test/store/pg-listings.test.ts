// The PostgreSQL listings adapter (server/store/pg/listings.ts) against the SQLite one
// (server/store/sqlite/artifact-listings.ts), on a real throwaway cluster: one seeded random sequence of
// builds getting, replacing and losing archives, and listings stored for the current archive or a
// stale one, must get the same answers from both stores at every step (set's true/false, summary,
// get, unlisted). The artifacts metadata itself (key, filename, size, expiry) is the builds
// adapter's (pg-builds.test.ts); the archive files stay in the data dir on either store.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { outcome } from '../helpers/differential.ts';
import { Prng } from '../../common/prng.ts';
import { Db } from '../../server/store/sqlite/db.ts';
import { Projects } from '../../server/store/sqlite/projects.ts';
import { Builds } from '../../server/store/sqlite/builds.ts';
import type { NewBuild } from '../../server/store/ports/build.ts';
import { ArtifactListings } from '../../server/store/sqlite/artifact-listings.ts';
import type { ArchiveListing } from '../../server/store/ports/artifact.ts';
import { openPgDatabase, PgBuilds, PgProjects, type PgDatabase } from '../../server/store/pg/index.ts';
import { PgListings } from '../../server/store/pg/listings.ts';

const missing = postgresMissing();
const pg = usePostgres();
let dbCount = 0;

interface Side {
  builds: Builds | PgBuilds;
  listings: ArtifactListings | PgListings;
}

const BUILD: Omit<NewBuild, 'project_id'> = {
  name: 'b', stage: 'test', ref: 'main', sha: 'a1b2c3d4', before_sha: '0000', tag: false, commands: 'true',
  repo_url: null, variables: [], options: {}, timeout: null, tag_list: [], depends_on: [],
};

function randomListing(rnd: Prng): ArchiveListing {
  const n = rnd.pick([0, 1, 3, 20]);
  const entries = Array.from({ length: n }, (_, i) => ({ name: rnd.pick([`f${i}.txt`, `dir/ünï ✓ ${i}`, `a "quoted" \\ name ${i}`]), size: rnd.pick([0, 1, 4096, 2 ** 40]) }));
  const total = n + rnd.pick([0, 0, 5]);
  return { entries, total, truncated: total > n };
}

type Step = { what: string; run: (s: Side) => Promise<unknown> };

/** What the plan knows of the stores: builds made, keys given, and each build's current key (to aim set() at it often). */
interface PlanState {
  builds: number;
  keys: number;
  current: Map<number, string>;
}

function planStep(rnd: Prng, state: PlanState): Step {
  const roll = rnd.int(0, 99);
  // Builds that exist, one past the end, 0 and a fraction (no row on either side, and no throw).
  const anyId = () => rnd.pick([rnd.int(1, Math.max(1, state.builds)), rnd.int(1, Math.max(1, state.builds)), state.builds + 1, 0, 2.5]);
  const exists = (id: number) => Number.isInteger(id) && id >= 1 && id <= state.builds;
  if (roll < 12) {
    state.builds++;
    return { what: 'create build', run: async (s) => (await s.builds.create({ ...BUILD, project_id: 1 })).id };
  }
  if (roll < 30) {
    const id = anyId();
    const key = `k${++state.keys}`;
    if (exists(id)) state.current.set(id, key);
    return {
      what: `setArtifacts(${id}, ${key})`,
      run: async (s) => {
        await s.builds.setArtifacts(id, { key, filename: 'a.zip', size: 10, expire_at: null });
        return s.listings.unlisted();
      },
    };
  }
  if (roll < 36) {
    const id = anyId();
    state.current.delete(id);
    return {
      what: `clearArtifacts(${id})`,
      run: async (s) => {
        await s.builds.clearArtifacts(id);
        return { get: await s.listings.get(id), unlisted: await s.listings.unlisted() };
      },
    };
  }
  if (roll < 66) {
    // Mostly a build with an archive and its current key; else a stale key, one never given, or any build.
    const listed = [...state.current.keys()];
    const id = listed.length && rnd.chance(0.7) ? rnd.pick(listed) : anyId();
    const key = rnd.chance(0.7) && state.current.has(id) ? state.current.get(id)! : `k${rnd.pick([rnd.int(1, Math.max(1, state.keys)), 999])}`;
    const listing = randomListing(rnd);
    return {
      what: `set(${id}, ${key}, ${JSON.stringify(listing)})`,
      run: async (s) => ({ stored: await s.listings.set(id, key, listing), get: await s.listings.get(id), summary: await s.listings.summary(id) }),
    };
  }
  // Lookups aim at builds with an archive (listed or not) most of the time.
  const lookId = () => (state.current.size && rnd.chance(0.7) ? rnd.pick([...state.current.keys()]) : anyId());
  if (roll < 76) {
    const id = lookId();
    return { what: `summary(${id})`, run: async (s) => s.listings.summary(id) };
  }
  if (roll < 88) {
    const id = lookId();
    return { what: `get(${id})`, run: async (s) => s.listings.get(id) };
  }
  return { what: 'unlisted()', run: async (s) => s.listings.unlisted() };
}

describe.skipIf(missing)(`PostgreSQL archive listings${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a seeded random sequence of archive and listing calls gets the same answers from PostgreSQL as from SQLite, at every step', async () => {
    const seen = { stored: 0, refused: 0, found: 0, truncated: 0, unlisted: 0, droppedByNewArchive: 0 };
    let steps = 0;
    for (let seed = 1; seed <= 3; seed++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jobscope-pglist-'));
      const sqlite = new Db(path.join(dir, 'jobscope.db'), { fsync: false });
      const pgdb: PgDatabase = await openPgDatabase(await pg.createDatabase(`li${++dbCount}`), { max: 2 });
      try {
        await new Projects(sqlite).create({ name: 'p' });
        await new PgProjects(pgdb.pool).create({ name: 'p' });
        const a: Side = { builds: new Builds(sqlite), listings: new ArtifactListings(sqlite) };
        const b: Side = { builds: new PgBuilds(pgdb.pool), listings: new PgListings(pgdb.pool) };
        const rnd = new Prng(seed);
        const state: PlanState = { builds: 0, keys: 0, current: new Map() };
        for (let step = 0; step < 250; step++) {
          const plan = planStep(rnd, state);
          const fromSqlite = await outcome(() => plan.run(a));
          const fromPg = await outcome(() => plan.run(b));
          expect(fromPg, `seed ${seed} step ${step}: ${plan.what}`).toEqual(fromSqlite);
          steps++;
          const ok = 'ok' in fromSqlite ? (fromSqlite.ok as Record<string, unknown> | undefined) : undefined;
          if (plan.what.startsWith('set(')) seen[ok?.stored ? 'stored' : 'refused']++;
          if (plan.what.startsWith('get(') && ok) {
            seen.found++;
            if ((ok as unknown as ArchiveListing).truncated) seen.truncated++;
          }
          if (plan.what === 'unlisted()' && Array.isArray(ok) && ok.length) seen.unlisted++;
        }
        // A new archive drops the listing of the old one (the trigger), on both.
        const id = (await a.builds.create({ ...BUILD, project_id: 1 })).id;
        expect((await b.builds.create({ ...BUILD, project_id: 1 })).id).toBe(id);
        for (const s of [a, b]) {
          await s.builds.setArtifacts(id, { key: 'old', filename: 'a.zip', size: 1, expire_at: null });
          expect(await s.listings.set(id, 'old', { entries: [{ name: 'x', size: 1 }], total: 1, truncated: false })).toBe(true);
          await s.builds.setArtifacts(id, { key: 'new', filename: 'a.zip', size: 1, expire_at: null });
          expect(await s.listings.get(id)).toBeUndefined();
          expect(await s.listings.unlisted()).toContainEqual({ id, key: 'new' });
        }
        seen.droppedByNewArchive++;
      } finally {
        sqlite.close();
        await pgdb.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    // The sequences reached what matters: listings stored and refused (stale key, no archive, no
    // build), found (truncated ones among them), and builds waiting for their listing.
    expect(steps).toBe(750);
    for (const [k, n] of Object.entries(seen)) expect(n, `${k}: ${JSON.stringify(seen)}`).toBeGreaterThan(2);
  });

  it('a file name with U+0000 in it is stored and read back (entries are json: jsonb would refuse it)', async () => {
    const pgdb = await openPgDatabase(await pg.createDatabase(`li${++dbCount}`), { max: 1 });
    try {
      await new PgProjects(pgdb.pool).create({ name: 'p' });
      const builds = new PgBuilds(pgdb.pool);
      const id = (await builds.create({ ...BUILD, project_id: 1 })).id;
      await builds.setArtifacts(id, { key: 'k', filename: 'a.zip', size: 1, expire_at: null });
      const listings = new PgListings(pgdb.pool);
      const listing = { entries: [{ name: 'a\u0000b', size: 3 }], total: 1, truncated: false };
      expect(await listings.set(id, 'k', listing)).toBe(true);
      expect(await listings.get(id)).toEqual(listing);
    } finally {
      await pgdb.close();
    }
  });
});
