// Probe, not a benchmark: the cluster's CPU per poll of the poll statement alone (store/pg/take.ts
// pollBuild), no HTTP and no Jobscope server, against the bare reference's one-table claim, on one
// cluster: a database per side and round (migrated as `serve --database` does), one project with
// `builds` pending builds, `runners` shared runners, `conns` connections each polling as a runner
// does until none is left. Sides alternate per round; the plan's nodes are counted from EXPLAIN.
// Each `label=<checkout>` is a side polling with that checkout's take.ts (default: this one's).
//   node --import tsx bench/experiments/pg-poll-plan.ts [--rounds N] [--builds N] [--conns N] [label=<checkout>...]
import os from 'node:os';
import path from 'node:path';
import type { Pool } from 'pg';
import { startPostgres } from '../../test/helpers/postgres.ts';
import { openPgDatabase } from '../../server/store/pg/index.ts';
import { cpuMeter } from '../lib/pg-bench.ts';
import { round } from '../lib/harness.ts';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv.splice(i, 2)[1]) : dflt;
};
const ROUNDS = opt('--rounds', 3);
const BUILDS = opt('--builds', 4000);
const RUNNERS = opt('--runners', 200);
const CONNS = opt('--conns', 8);

interface Runner {
  id: number;
  is_shared: boolean;
  project_id: number | null;
  tag_list: string[];
  run_untagged: boolean;
}

/** A side: one poll of `runner` on `pool`, true when it took a build. */
interface Side {
  name: string;
  setUp?: (pool: Pool) => Promise<void>;
  poll: (pool: Pool, runner: Runner) => Promise<boolean>;
  /** The statement and its values, for EXPLAIN. */
  explain?: (runner: Runner) => [string, unknown[]];
}

const BARE_CLAIM = `UPDATE bare_builds SET status = 'running', runner = $1, started_at = $2
  WHERE id = (SELECT id FROM bare_builds WHERE status = 'pending' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, token`;

type TakeModule = typeof import('../../server/store/pg/take.ts');
const checkouts = argv.length ? argv.map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] as const) : [['ours', path.resolve(import.meta.dirname, '../..')] as const];
const ours: Side[] = [];
for (const [name, root] of checkouts) {
  const take = (await import(path.join(root, 'server/store/pg/take.ts'))) as Partial<TakeModule> & Pick<TakeModule, 'pollBuild'>;
  const sql = take.POLL_SQL?.shared['quiet-seen'];
  ours.push({
    name,
    poll: async (pool, runner) => (await take.pollBuild(pool, runner, undefined, true, { counter: null })).taken !== undefined,
    explain: sql ? (runner) => [sql, [runner.id, '[]', true, Date.now(), null]] : undefined,
  });
}

const sides: Side[] = [
  ...ours,
  {
    name: 'bare',
    setUp: async (pool) => {
      await pool.query(`CREATE TABLE bare_builds (id bigserial PRIMARY KEY, status text NOT NULL DEFAULT 'pending', runner text, started_at bigint, token text NOT NULL)`);
      await pool.query(`CREATE INDEX bare_builds_status ON bare_builds (status, id)`);
      await pool.query(`INSERT INTO bare_builds (token) SELECT md5(i::text) FROM generate_series(1, $1::int) i`, [BUILDS]);
    },
    poll: async (pool, runner) => (await pool.query({ name: 'bare-claim', text: BARE_CLAIM, values: [String(runner.id), Date.now()] })).rows.length > 0,
  },
];

async function seed(pool: Pool): Promise<Runner[]> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO projects (name, runners_token, runners_token_sha, ci_token, ci_token_sha, shared_runners_enabled, created_at)
     VALUES ('p', 'r', 'rs', 'c', 'cs', true, 0) RETURNING id`,
  );
  const project = Number(rows[0]!.id);
  await pool.query(
    `INSERT INTO builds (project_id, status, name, stage, ref, sha, before_sha, commands, token, token_sha, created_at)
     SELECT $1, 'pending', 'b' || i, 'test', 'main', 'a', 'b', 'true', 't' || i, 'ts' || i, 0 FROM generate_series(1, $2::int) i`,
    [project, BUILDS],
  );
  const runners = await pool.query<{ id: string }>(
    `INSERT INTO runners (token, token_sha, description, is_shared, active, run_untagged, tag_list, info, online, contacted_at, created_at)
     SELECT 'rt' || i, 'rts' || i, 'r', true, true, true, '[]', '{}', true, 0, 0 FROM generate_series(1, $1::int) i RETURNING id`,
    [RUNNERS],
  );
  // X-GitLab-Last-Update's counter (runner-queue.ts makes it at start): the poll takes only when it differs from the runner's.
  await pool.query(`INSERT INTO settings (key, value) VALUES ('runner_queue_counter', '1')`);
  await pool.query('ANALYZE');
  return runners.rows.map((r) => ({ id: Number(r.id), is_shared: true, project_id: null, tag_list: [], run_untagged: true }));
}

/** Plan nodes in EXPLAIN's JSON, InitPlans and CTEs included. */
function countNodes(plan: { Plans?: unknown[] }): number {
  return 1 + (plan.Plans ?? []).reduce<number>((n, p) => n + countNodes(p as { Plans?: unknown[] }), 0);
}

const cluster = await startPostgres({ database: 'pollplan' });
const dataDir = path.join(cluster.dir, 'data');
const results: Record<string, number[]> = {};
const rotate = <T>(xs: T[], n: number) => [...xs.slice(n % xs.length), ...xs.slice(0, n % xs.length)];
try {
  for (let r = 0; r < ROUNDS; r++) {
    for (const side of rotate(sides, r)) {
      const db = await openPgDatabase(await cluster.createDatabase(`${side.name.replace(/\W/g, '_')}_${r}`), { max: CONNS });
      try {
        const runners = await seed(db.pool);
        await side.setUp?.(db.pool);
        let next = 0;
        let taken = 0;
        let polls = 0;
        const meter = cpuMeter([], dataDir);
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: CONNS }, async () => {
            while (taken < BUILDS) {
              const runner = runners[next++ % runners.length]!;
              polls++;
              if (await side.poll(db.pool, runner)) taken++;
              else break;
            }
          }),
        );
        const ms = performance.now() - t0;
        const cpu = meter().cluster / polls;
        (results[side.name] ??= []).push(cpu);
        console.log(`round ${r + 1} ${side.name}: ${polls} polls, ${taken} taken, ${round(polls / (ms / 1000), 0)} polls/s, cluster ${round(cpu, 3)} ms CPU a poll; load ${os.loadavg()[0]!.toFixed(1)}`);
        if (r === 0 && side.explain) {
          // On builds made pending again in a transaction rolled back after: the plan of a poll that takes.
          const c = await db.pool.connect();
          try {
            await c.query('BEGIN');
            await c.query(`UPDATE builds SET status = 'pending', runner_id = NULL WHERE id IN (SELECT id FROM builds ORDER BY id DESC LIMIT 10)`);
            const [text, values] = side.explain(runners[0]!);
            const { rows } = await c.query<{ 'QUERY PLAN': [{ Plan: { Plans?: unknown[] } }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
            console.log(`${side.name}: ${countNodes(rows[0]!['QUERY PLAN'][0].Plan)} plan nodes`);
            await c.query('ROLLBACK');
          } finally {
            c.release();
          }
        }
      } finally {
        await db.close();
      }
    }
  }
  for (const [name, xs] of Object.entries(results)) console.log(`${name}: cluster CPU a poll ${xs.map((x) => round(x, 3)).join(' / ')} ms`);
} finally {
  await cluster.stop();
}
