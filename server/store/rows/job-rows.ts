// A jobs row read back as the job system's job, the same on SQLite and PostgreSQL: a value stored out
// of range (a row edited by hand) reads clamped or emptied, so one bad row cannot break every read of
// the retry or dead set. Only how the args arrive differs (JSON text on SQLite, parsed by pg).
import type { FailedJob } from '../../jobs/types.ts';
import { storedInt, storedTimeOr0 } from './row-values.ts';
import { storedTime } from '../../util/times.ts';

/** The columns both job backends' jobs tables hold, args aside. */
export interface JobRowValues {
  id: number;
  queue: string;
  class: string;
  kind: string;
  state: string;
  retry: number;
  retry_count: number;
  created_at: number;
  enqueued_at: number;
  run_at: number | null;
  failed_at: number | null;
  error: string | null;
}

/** The `retry` column: -1 stands for `false` (drop after the first failure). */
export const retryColumn = (retry: number | false): number => (retry === false ? -1 : retry);

export const jobOfRow = (r: JobRowValues, args: Record<string, unknown>): FailedJob => ({
  id: storedInt(r.id) ?? 0,
  queue: r.queue,
  class: r.class,
  kind: r.kind,
  args,
  retry: r.retry < 0 ? false : (storedInt(r.retry, 0, 1000) ?? 0),
  retry_count: storedInt(r.retry_count, 0, 1000) ?? 0,
  created_at: storedTimeOr0(r.created_at),
  enqueued_at: storedTimeOr0(r.enqueued_at),
  run_at: storedTime(r.run_at),
  failed_at: storedTime(r.failed_at),
  error: r.error,
});
