// Rows of the jobs table as the job system's jobs (pg/job-backend.ts), read by rows/job-rows.ts as the
// SQLite job backend reads its own; the database's clock; what text PostgreSQL can store.
import type { FailedJob } from '../../jobs/types.ts';
import { jobOfRow, type JobRowValues } from '../rows/job-rows.ts';
import { isPlainObject } from '../rows/row-values.ts';

/** As pg returns a jobs row (bigints as numbers: connect.ts; args parsed from json). */
export interface PgJobRow extends JobRowValues {
  args: unknown;
  claimed_by: string | null;
}

export const JOB_COLUMNS = 'id, queue, class, kind, args, state, retry, retry_count, created_at, enqueued_at, run_at, failed_at, error, claimed_by';

export const toJob = (r: PgJobRow): FailedJob => jobOfRow(r, isPlainObject(r.args) ? r.args : {});

/** The database's clock in epoch ms: what heartbeats expire by, whatever the instances' clocks say. */
export const DB_NOW_MS = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`;

/**
 * A job's error text as PostgreSQL can store it: text refuses NUL (22021), and an error message may
 * carry one (a file name read from an uploaded archive). Refused, the job's end would never be
 * written and the job would stay claimed; U+FFFD marks where the NUL was.
 */
export const storableError = (error: string | null): string | null => (error === null ? null : error.replace(/\u0000/g, '\uFFFD'));
