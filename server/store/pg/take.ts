// Dispatch on PostgreSQL: BuildsPort.take (store/ports/ports.ts) for several instances sharing one database.
//
// Exactly once: the build is chosen and locked in one statement with FOR UPDATE SKIP LOCKED and
// turned running by the same statement, which commits alone. A build another poll has locked is
// passed over (not waited for), and one a concurrent poll has already committed as running fails the
// re-check of status = 'pending' that PostgreSQL makes on the newest version of a row it locks. So
// polls on any number of connections and instances never hand out one build twice, and never queue
// behind each other.
//
// Order: the same as the SQLite take() (store/sqlite/builds.ts). A project runner takes its project's
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
import type { Build } from '../ports/build.ts';
import type { Runner } from '../ports/runner.ts';
import type { Project } from '../ports/project.ts';
import type { Queryable } from './connect.ts';
import type { ContactWrite } from './runners.ts';
import { COUNTER_KEY, type SeenCounter } from './runner-queue.ts';
import { BUILD_COLUMNS, PROJECT_RETURNED, toBuild, toJoinedProject, type PgBuildRow, type PgJoinedProjectRow } from './build-rows.ts';

const RETURNED = BUILD_COLUMNS.split(',')
  .map((c) => `builds.${c.trim()}`)
  .join(', ');

/**
 * A build's tags must all be among the runner's ($2, a jsonb array); an untagged build needs
 * run_untagged ($3). GitLab's can_pick?, as runnerMatches in store/sqlite/builds.ts.
 */
const MATCHES = `(CASE WHEN b.tag_list = '[]'::jsonb THEN $3::boolean ELSE b.tag_list <@ $2::jsonb END)`;

/**
 * A project's pending builds, read in id order from builds_project_status (project_id, status, id).
 * Why a range on status and an ORDER BY that names it, not status = 'pending' and ORDER BY id:
 * PostgreSQL drops an ORDER BY column it knows equal to a constant, and then builds_pkey (id order,
 * each row's project and status checked as it goes) gives the same order. Whenever the statistics
 * last saw most builds pending (a queue filled at once, as the benchmark's 10,000), the planner
 * costs the two alike, picks builds_pkey, and keeps it in the prepared statement's generic plan:
 * each poll then walked every build taken since, once for the oldest pending and once for the take
 * (1,514 rows each at 1,500 taken: 0.65 ms of a 0.15 ms poll; bench/experiments/pg-poll-plan.ts).
 * builds_pkey cannot give (status, id), so the plan reads the pending range alone whatever the statistics.
 */
const pendingOf = (alias: string, project: string) =>
  `${alias}.project_id = ${project} AND ${alias}.status >= 'pending' AND ${alias}.status <= 'pending'`;
const PENDING_ORDER = (alias: string) => `ORDER BY ${alias}.status, ${alias}.id`;

/** $1 runner id, $4 started_at; `picked` names the one locked build. */
const HAND_OUT = `UPDATE builds SET status = 'running', runner_id = $1, started_at = $4
  FROM picked WHERE builds.id = picked.id AND builds.status = 'pending'
  RETURNING ${RETURNED}`;

/** HAND_OUT that also returns the build's project (its row joined, not locked): the poll's answer needs it. */
const HAND_OUT_WITH_PROJECT = `UPDATE builds SET status = 'running', runner_id = $1, started_at = $4
  FROM picked, projects p WHERE builds.id = picked.id AND builds.status = 'pending' AND p.id = builds.project_id
  RETURNING ${RETURNED}, ${PROJECT_RETURNED}`;

/**
 * What a statement adds for the poll (pollBuild): `guard` keeps it from choosing (and locking) a
 * build unless the runner still exists and is active, `before` is CTEs put first. Empty for takeBuild.
 */
interface PollParts {
  guard: string;
  before: string;
  handOut: string;
}
const PLAIN: PollParts = { guard: '', before: '', handOut: HAND_OUT };

const takeProject = (x: PollParts) => `WITH ${x.before}picked AS (
    SELECT b.id FROM builds b
    WHERE ${pendingOf('b', '$5')} AND ${MATCHES}${x.guard}
    ${PENDING_ORDER('b')} LIMIT 1
    FOR UPDATE SKIP LOCKED
  )
  ${x.handOut}`;
const TAKE_PROJECT = takeProject(PLAIN);

// The projects that have a pending build are found first (one index read each); the running builds
// are counted, in one pass grouped by project, only when two or more of them compete, as the SQLite
// take does: the count reads every running build (a sequential scan at 9,000 running: 12-54 ms a
// poll, which bounded dispatch on PostgreSQL to 0.12x the bare SKIP LOCKED loop), and with one
// candidate the order does not depend on it. The uncorrelated count of candidates is a one-time
// filter in the plan, so the scan is not started at all. The lateral read of each project's builds
// runs in the projects' order and the LIMIT stops at the first project that yields a build, so the
// later projects' builds are neither read nor locked.
const takeShared = (x: PollParts) => `WITH ${x.before}cand AS MATERIALIZED (
    SELECT p.id AS project_id, o.oldest
    FROM projects p
    CROSS JOIN LATERAL (SELECT ob.id AS oldest FROM builds ob WHERE ${pendingOf('ob', 'p.id')} ${PENDING_ORDER('ob')} LIMIT 1) o
    WHERE p.shared_runners_enabled${x.guard}
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
      WHERE ${pendingOf('b', 'w.project_id')} AND ${MATCHES}
      ${PENDING_ORDER('b')} LIMIT 1
      FOR UPDATE SKIP LOCKED
    ) c
    ORDER BY w.running, w.oldest
    LIMIT 1
  )
  ${x.handOut}`;
const TAKE_SHARED = takeShared(PLAIN);

/** Whether the runner may take builds at all: a shared runner, or one with a project. */
export function mayTake(runner: Pick<Runner, 'is_shared' | 'project_id'>): boolean {
  return runner.is_shared || runner.project_id !== null;
}

/** Hands the oldest pending build this runner may take to it (exactly once across instances), or undefined. */
export async function takeBuild(db: Queryable, runner: Pick<Runner, 'id' | 'is_shared' | 'project_id' | 'tag_list' | 'run_untagged'>): Promise<Build | undefined> {
  if (!mayTake(runner)) return undefined;
  const params: unknown[] = [runner.id, JSON.stringify(runner.tag_list), runner.run_untagged, Date.now()];
  const { rows } = runner.is_shared
    ? await db.query<PgBuildRow>(TAKE_SHARED, params)
    : await db.query<PgBuildRow>(TAKE_PROJECT, [...params, runner.project_id]);
  return rows.length ? toBuild(rows[0]) : undefined;
}

// The poll in one statement (backend.ts dispatch): what were four round trips (stillActive, the
// contact write, the take, the project read) one after the other, each waiting on the last. The
// runner check is an uncorrelated CTE, so PostgreSQL evaluates it once before choosing (a paused,
// deleted or changed runner reads no build and locks none), reading the runner row as committed
// when the statement starts. It checks what the take depends on, not only `active`: the runner may
// come from this instance's cache (runner-cache.ts) rather than a read one round trip earlier, and
// its tags, run_untagged, shared flag or project may have changed on another instance. The
// contact write is a data-modifying CTE, which PostgreSQL runs to completion whether or not a build
// is taken, and only when the check passed. The statement always returns one row: `runner_ok`
// says whether the check passed, and the build's columns are null when none was taken.
//
// The token is not checked: ids are never reused and a runner's token never changes (nothing
// updates runners.token), so the id names the row the token named when the runner was read.
// Parameters: $1 runner id, $2 tags (jsonb), $3 run_untagged, $4 now, then for a project runner $5
// its project; then the contact's time and its info; then, with `seen`, the runner's counter.
const runnerCheck = (shared: boolean, queue: string) =>
  `g AS (SELECT EXISTS (SELECT 1 FROM runners ar WHERE ar.id = $1 AND ar.active AND ar.is_shared = ${shared} ` +
  `AND ar.tag_list = $2::jsonb AND ar.run_untagged = $3${shared ? '' : ' AND ar.project_id = $5'}) AS ok${queue}), `;
const CHECKED = ' AND (SELECT ok FROM g)';
const touched = (at: number, info: number) =>
  `touched AS (UPDATE runners SET contacted_at = $${at}, online = true, info = COALESCE($${info}::json, info) WHERE id = $1 AND (SELECT ok FROM g) RETURNING 1), `;
// takeShared/takeProject put handOut after `picked AS (...)`: here it is one more CTE and the final SELECT.
const handed = (queue: string) => `, handed AS (${HAND_OUT_WITH_PROJECT})
  SELECT (SELECT ok FROM g) AS runner_ok${queue}, h.* FROM (SELECT 1) AS one LEFT JOIN handed h ON true`;

// X-GitLab-Last-Update's shared counter (runner-queue.ts), read by the poll's own statement: it was
// a round trip of its own before each poll (a poll was two, the counter's SELECT and this statement,
// each waiting on the last). In one statement the counter and the builds are read from one snapshot,
// and the counter row is moved in commit order by the transactions that make builds pending: every
// build whose counter is at most the one read is visible to the take, and one committed later has a
// greater counter. So answering the counter read after taking nothing never hides a build, as
// reading it one round trip before the take did not. The runner's value ($n, its counter under this
// database's epoch, null for any other) stops the take when it equals the row's: GitLab's 204 short
// cut, decided in the same snapshot.
const QUEUE_COUNTER = `(SELECT value FROM settings WHERE key = '${COUNTER_KEY}')`;
const unseen = (at: number) => ` AND (SELECT queue FROM g) IS DISTINCT FROM $${at}::text`;

const pollSql = (shared: boolean, contact: boolean, seen: boolean) => {
  const first = shared ? 5 : 6;
  const guard = CHECKED + (seen ? unseen(first + (contact ? 2 : 0)) : '');
  const before = runnerCheck(shared, seen ? `, ${QUEUE_COUNTER} AS queue` : '') + (contact ? touched(first, first + 1) : '');
  const parts: PollParts = { guard, before, handOut: handed(seen ? ', (SELECT queue FROM g) AS queue_counter' : '') };
  return shared ? takeShared(parts) : takeProject(parts);
};
const pollVariants = (shared: boolean) => ({
  quiet: pollSql(shared, false, false),
  contact: pollSql(shared, true, false),
  'quiet-seen': pollSql(shared, false, true),
  'contact-seen': pollSql(shared, true, true),
});
/** The poll statements by runner kind and variant (pollBuild), for EXPLAIN in probes. */
export const POLL_SQL = { project: pollVariants(false), shared: pollVariants(true) };
const CONTACT_ONLY = 'UPDATE runners SET contacted_at = $2, online = true, info = COALESCE($3::json, info) WHERE id = $1 AND active';
/** CONTACT_ONLY, answering the shared counter (one row whether or not the runner was active). */
const CONTACT_ONLY_SEEN = `WITH touched AS (${CONTACT_ONLY} RETURNING 1) SELECT ${QUEUE_COUNTER} AS queue_counter`;
const COUNTER_ONLY = `SELECT ${QUEUE_COUNTER} AS queue_counter`;

/** What a poll found: whether the runner still is as given (`runnerOk`), and the build taken, if any. */
export interface PollOutcome {
  runnerOk: boolean;
  taken?: { build: Build; project: Project };
  /** The shared counter the statement read, when asked to (`seen`). */
  counter?: number;
}

const counterOf = (row: { queue_counter?: string | null } | undefined): number => Number(row?.queue_counter ?? 0);

/**
 * A poll: the contact written when `contact` says so, and with `take` the build taken as takeBuild
 * takes it, with its project, in one statement; nothing for a runner that is paused, deleted or no
 * longer as given (`runnerOk` false). Without `take` only the contact is written, and the runner is
 * checked for `active` only (`runnerOk` true whatever it found: the caller read the runner itself).
 * With `seen` the same statement reads the shared counter (answered as `counter`) and takes only
 * when it differs from the runner's.
 */
export async function pollBuild(
  db: Queryable,
  runner: Pick<Runner, 'id' | 'is_shared' | 'project_id' | 'tag_list' | 'run_untagged'>,
  contact: ContactWrite | undefined,
  take: boolean,
  seen?: SeenCounter,
): Promise<PollOutcome> {
  if (!take || !mayTake(runner)) {
    // Nothing is taken, so the answer is the same for an active runner and a paused one: only the write is left.
    if (!seen) {
      if (contact) await db.query({ name: 'jobscope-contact', text: CONTACT_ONLY, values: [runner.id, contact.at, contact.info] });
      return { runnerOk: true };
    }
    const { rows } = contact
      ? await db.query<{ queue_counter: string | null }>({ name: 'jobscope-contact-seen', text: CONTACT_ONLY_SEEN, values: [runner.id, contact.at, contact.info] })
      : await db.query<{ queue_counter: string | null }>({ name: 'jobscope-queue-counter', text: COUNTER_ONLY });
    return { runnerOk: true, counter: counterOf(rows[0]) };
  }
  const params: unknown[] = [runner.id, JSON.stringify(runner.tag_list), runner.run_untagged, contact?.at ?? Date.now()];
  if (!runner.is_shared) params.push(runner.project_id);
  if (contact) params.push(contact.at, contact.info);
  if (seen) params.push(seen.counter);
  const kind = runner.is_shared ? 'shared' : 'project';
  const write = `${contact ? 'contact' : 'quiet'}${seen ? '-seen' : ''}` as const;
  // Named, so each connection parses and plans it once (pg prepares it on first use per connection):
  // planning this statement took 0.7 ms of the cluster's CPU, half of what executing it took.
  const { rows } = await db.query<PgBuildRow & PgJoinedProjectRow & { runner_ok: boolean; queue_counter?: string | null }>({
    name: `jobscope-poll-v3-${kind}-${write}`,
    text: POLL_SQL[kind][write],
    values: params,
  });
  const row = rows[0];
  const counter = seen ? { counter: counterOf(row) } : {};
  if (!row?.runner_ok) return { runnerOk: false, ...counter };
  return row.id === null ? { runnerOk: true, ...counter } : { runnerOk: true, taken: { build: toBuild(row), project: toJoinedProject(row) }, ...counter };
}

/** The statements, for EXPLAIN in tests and benchmarks. */
export const TAKE_SQL = { project: TAKE_PROJECT, shared: TAKE_SHARED } as const;
