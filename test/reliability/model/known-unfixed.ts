// The one switch per known product bug the mode suites find: while a bug's name is listed here, the
// check that fails because of it is relaxed where the comment says, and nothing else is. Remove a
// name once the fix is merged: the suites then check the intended behaviour in full.
export type KnownBug = 'redis-503' | 'redis-job-ends' | 'pg-503' | 'pg-job-ends' | 'pg-cancel-race' | 'pg-last-update';

export const KNOWN_UNFIXED = new Set<KnownBug>([
  // With the job system's Redis killed or stopped, its requests answer 500 (or hang) instead of 503
  // with Retry-After. Listed: a 5xx during a Redis outage is taken as an unknown outcome.
  'redis-503',
  // Jobs in flight or waiting around a kill -9 or SIGSTOP of Redis: some ends are lost and some jobs
  // run twice. Seen (seed 20261101): a drain with 106 dead of 110 acknowledged retry-0 failing jobs;
  // processed 239 for 229 acknowledged jobs (none of unknown outcome); processed 81 of 83 with the
  // backlog empty. Listed: after a Redis fault the jobs enqueued before it are no longer counted
  // (lower bounds), and the counters' upper bound is off for the rest of the run.
  'redis-job-ends',
  // With PostgreSQL stopped or its postmaster killed, requests answer 500 (or hang) instead of 503
  // with Retry-After. Listed: a 5xx during a PostgreSQL outage is taken as an unknown outcome.
  'pg-503',
  // The same around pg_ctl stop (fast or immediate) or a kill -9 of the postmaster, with the job
  // system in the database: seen (seed 20261102) a drain with 58 dead of 67 acknowledged retry-0
  // failing jobs, processed 202/202 and failed 124/124; and processed 208 for 202 acknowledged jobs.
  // With kill -9 of one instance alone (MODEL_FAULTS=instance-kill9) 1,501 steps passed in full.
  // Listed: as redis-job-ends, after a PostgreSQL fault.
  'pg-job-ends',
  // PUT state=success and a cancel of the same running build sent at once to two instances both
  // answered 200 (the PUT's body said "canceled"; seed 20261102, run 1, shrunk to 9 steps); the
  // loser should get 404 (PUT) or 409 (cancel). Listed: the PostgreSQL mode draws no race step.
  'pg-cancel-race',
  // X-GitLab-Last-Update is each instance's own (its boot id): a runner given "4e7ffbca-18" by one
  // instance and polling the other with it, nothing created meanwhile, was answered "187872cc-16"
  // (seed 20261102, run 1). Listed: with two instances polls do not send last_update, and a value
  // is not compared with one the other instance gave.
  'pg-last-update',
]);

// MODEL_KNOWN_UNFIXED=<name,…> (or empty) replaces the list for one run: to see a listed bug's check fail.
const override = process.env.MODEL_KNOWN_UNFIXED;
const listed: ReadonlySet<string> = override === undefined ? KNOWN_UNFIXED : new Set(override.split(',').filter(Boolean));

export const unfixed = (bug: KnownBug): boolean => listed.has(bug);
