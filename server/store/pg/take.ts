// Dispatch on PostgreSQL: BuildsPort.take (store/ports.ts) for several instances sharing one database.
//
// Exactly once: the build is chosen and locked in one statement with FOR UPDATE SKIP LOCKED and
// turned running by the same statement, which commits alone. A build another poll has locked is
// passed over (not waited for), and one a concurrent poll has already committed as running fails the
// re-check of status = 'pending' that PostgreSQL makes on the newest version of a row it locks. So
// polls on any number of connections and instances never hand out one build twice, and never queue
// behind each other.
//
// Order: the same as the SQLite take() (store/builds.ts). A project runner takes its project's
// oldest pending build it can run. A shared runner looks at the projects with shared runners
// enabled and a pending build, fewest builds running on shared runners first, then the one whose
// oldest pending build is oldest (GitLab's RegisterBuildService), and takes the first build it can
// run in the first project that has one. The projects are sorted first and each one's builds are
// read by index in id order, stopping at the first match: a poll costs about the same over 10 or
// 10,000 pending builds, and locks only the build it takes.
//
// One difference, as in GitLab (which raced its polls and let the loser retry): the SQLite take runs
// one poll at a time, so each poll sees the running counts the one before it left. Here polls running
// at the same moment read the counts from the same snapshot, and two of them may both pick the least
// busy project (the second takes its next build). Polls that do not overlap see the same order as on SQLite.
import type { Build } from '../builds.ts';
import type { Runner } from '../runners.ts';
import type { Queryable } from './connect.ts';
import { BUILD_COLUMNS, toBuild, type PgBuildRow } from './build-rows.ts';

const RETURNED = BUILD_COLUMNS.split(',')
  .map((c) => `builds.${c.trim()}`)
  .join(', ');

/**
 * A build's tags must all be among the runner's ($2, a jsonb array); an untagged build needs
 * run_untagged ($3). GitLab's can_pick?, as runnerMatches in store/builds.ts.
 */
const MATCHES = `(CASE WHEN b.tag_list = '[]'::jsonb THEN $3::boolean ELSE b.tag_list <@ $2::jsonb END)`;

/** $1 runner id, $4 started_at; `picked` names the one locked build. */
const HAND_OUT = `UPDATE builds SET status = 'running', runner_id = $1, started_at = $4
  FROM picked WHERE builds.id = picked.id AND builds.status = 'pending'
  RETURNING ${RETURNED}`;

const TAKE_PROJECT = `WITH picked AS (
    SELECT b.id FROM builds b
    WHERE b.project_id = $5 AND b.status = 'pending' AND ${MATCHES}
    ORDER BY b.id LIMIT 1
    FOR UPDATE SKIP LOCKED
  )
  ${HAND_OUT}`;

// The projects that have a pending build are found first (one index read each); the running builds
// are counted, in one pass grouped by project, only when two or more of them compete, as the SQLite
// take does: the count reads every running build (a sequential scan at 9,000 running: 12-54 ms a
// poll, which bounded dispatch on PostgreSQL to 0.12x the bare SKIP LOCKED loop), and with one
// candidate the order does not depend on it. The uncorrelated count of candidates is a one-time
// filter in the plan, so the scan is not started at all. The lateral read of each project's builds
// runs in the projects' order and the LIMIT stops at the first project that yields a build, so the
// later projects' builds are neither read nor locked.
const TAKE_SHARED = `WITH cand AS MATERIALIZED (
    SELECT p.id AS project_id, o.oldest
    FROM projects p
    CROSS JOIN LATERAL (SELECT min(ob.id) AS oldest FROM builds ob WHERE ob.project_id = p.id AND ob.status = 'pending') o
    WHERE p.shared_runners_enabled AND o.oldest IS NOT NULL
  ), rc AS (
    SELECT rb.project_id, count(*) AS n FROM builds rb JOIN runners r ON r.id = rb.runner_id
    WHERE (SELECT count(*) FROM cand) > 1 AND rb.status = 'running' AND r.is_shared GROUP BY rb.project_id
  ), picked AS (
    SELECT c.id FROM (
      SELECT cand.project_id, cand.oldest, COALESCE(rc.n, 0) AS running
      FROM cand LEFT JOIN rc ON rc.project_id = cand.project_id
      ORDER BY running, cand.oldest
    ) w
    CROSS JOIN LATERAL (
      SELECT b.id FROM builds b
      WHERE b.project_id = w.project_id AND b.status = 'pending' AND ${MATCHES}
      ORDER BY b.id LIMIT 1
      FOR UPDATE SKIP LOCKED
    ) c
    ORDER BY w.running, w.oldest
    LIMIT 1
  )
  ${HAND_OUT}`;

/** Hands the oldest pending build this runner may take to it (exactly once across instances), or undefined. */
export async function takeBuild(db: Queryable, runner: Pick<Runner, 'id' | 'is_shared' | 'project_id' | 'tag_list' | 'run_untagged'>): Promise<Build | undefined> {
  if (!runner.is_shared && runner.project_id === null) return undefined;
  const params: unknown[] = [runner.id, JSON.stringify(runner.tag_list), runner.run_untagged, Date.now()];
  const { rows } = runner.is_shared
    ? await db.query<PgBuildRow>(TAKE_SHARED, params)
    : await db.query<PgBuildRow>(TAKE_PROJECT, [...params, runner.project_id]);
  return rows.length ? toBuild(rows[0]) : undefined;
}

/** The statements, for EXPLAIN in tests and benchmarks. */
export const TAKE_SQL = { project: TAKE_PROJECT, shared: TAKE_SHARED } as const;
