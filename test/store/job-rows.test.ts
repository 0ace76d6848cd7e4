// How a jobs row reads back on both SQL job backends (store/rows/job-rows.ts): one reader, so a bound
// cannot differ between SQLite and PostgreSQL.
import { describe, expect, it } from 'vitest';
import { toJob as pgToJob } from '../../server/store/pg/jobs-rows.ts';
import { jobOfRow, retryColumn, type JobRowValues } from '../../server/store/rows/job-rows.ts';
import { MAX_DATE_MS } from '../../server/util/times.ts';

const row: JobRowValues = { id: 7, queue: 'default', class: 'Hard', kind: 'k', state: 'dead', retry: 3, retry_count: 2, created_at: 1000, enqueued_at: 2000, run_at: null, failed_at: 3000, error: 'boom' };

describe('a jobs row read back', () => {
  it('reads a row as it was written', () => {
    expect(jobOfRow(row, { a: 1 })).toEqual({ id: 7, queue: 'default', class: 'Hard', kind: 'k', args: { a: 1 }, retry: 3, retry_count: 2, created_at: 1000, enqueued_at: 2000, run_at: null, failed_at: 3000, error: 'boom' });
  });

  it('reads values edited out of range clamped or emptied, never throwing', () => {
    const bad = { ...row, id: '7x' as unknown as number, retry: 5000, retry_count: -4, created_at: 1e300, enqueued_at: Number.NaN, run_at: -1e300, failed_at: 'x' as unknown as number };
    const j = jobOfRow(bad, {});
    expect([j.id, j.retry, j.retry_count, j.created_at, j.enqueued_at, j.run_at, j.failed_at]).toEqual([0, 1000, 0, MAX_DATE_MS, 0, -MAX_DATE_MS, null]);
  });

  it('stores retry false as -1 and reads it back as false', () => {
    expect(jobOfRow({ ...row, retry: retryColumn(false) }, {}).retry).toBe(false);
    expect(jobOfRow({ ...row, retry: retryColumn(25) }, {}).retry).toBe(25);
  });

  it('on PostgreSQL, args that are no plain object read as {}', () => {
    expect(pgToJob({ ...row, args: [1, 2], claimed_by: null }).args).toEqual({});
    expect(pgToJob({ ...row, args: { q: 1 }, claimed_by: 'p1' }).args).toEqual({ q: 1 });
  });
});
