// Rows of the jobs table as the job system's jobs (pg/job-backend.ts), read as the SQLite job backend reads
// its own: a value stored out of range (a row edited by hand) reads clamped or emptied, so one bad
// row cannot break every read of the retry or dead set.
import type { FailedJob } from '../../jobs/types.ts';
import { isPlainObject, storedInt, storedTimeOr0 } from '../rows/row-values.ts';
import { storedTime } from '../../util/times.ts';

/** As pg returns a jobs row (bigints as numbers: connect.ts; args parsed from json). */
export interface PgJobRow {
  id: number;
  queue: string;
  class: string;
  kind: string;
  args: unknown;
  state: string;
  retry: number;
  retry_count: number;
  created_at: number;
  enqueued_at: number;
  run_at: number | null;
  failed_at: number | null;
  error: string | null;
  claimed_by: string | null;
}

export const JOB_COLUMNS = 'id, queue, class, kind, args, state, retry, retry_count, created_at, enqueued_at, run_at, failed_at, error, claimed_by';

/** The `retry` column: -1 stands for `false` (drop after the first failure), as on SQLite. */
export const retryColumn = (retry: number | false): number => (retry === false ? -1 : retry);

export const toJob = (r: PgJobRow): FailedJob => ({
  id: storedInt(r.id) ?? 0,
  queue: r.queue,
  class: r.class,
  kind: r.kind,
  args: isPlainObject(r.args) ? r.args : {},
  retry: r.retry < 0 ? false : (storedInt(r.retry, 0, 1000) ?? 0),
  retry_count: storedInt(r.retry_count, 0, 1000) ?? 0,
  created_at: storedTimeOr0(r.created_at),
  enqueued_at: storedTimeOr0(r.enqueued_at),
  run_at: storedTime(r.run_at),
  failed_at: storedTime(r.failed_at),
  error: r.error,
});

/** The database's clock in epoch ms: what heartbeats expire by, whatever the instances' clocks say. */
export const DB_NOW_MS = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`;

/**
 * A job's error text as PostgreSQL can store it: text refuses NUL (22021), and an error message may
 * carry one (a file name read from an uploaded archive). Refused, the job's end would never be
 * written and the job would stay claimed; U+FFFD marks where the NUL was.
 */
export const storableError = (error: string | null): string | null => (error === null ? null : error.replace(/\u0000/g, '\uFFFD'));
