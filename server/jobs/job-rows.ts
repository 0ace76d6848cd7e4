// The job system's rows in the store (migration 3). Only durable queues come here; every method is
// one or a few cached statements, and callers group them in one transaction per job step.
import type { Db } from '../store/db.ts';
import type { Job } from './types.ts';
import { isPlainObject, storedInt, storedJson, storedTime, storedTimeOr0 } from '../store/row-values.ts';

interface JobRow {
  id: number;
  queue: string;
  class: string;
  kind: string;
  args: string;
  state: string;
  retry: number;
  retry_count: number;
  created_at: number;
  enqueued_at: number;
  run_at: number | null;
  failed_at: number | null;
  error: string | null;
}

/** A job in the retry or dead set, with why it failed. */
export interface FailedJob extends Job {
  run_at: number | null;
  failed_at: number | null;
  error: string | null;
}

// `retry` column: -1 stands for `false` (drop after the first failure). Numbers and JSON are read
// through row-values.ts: a row stored out of range must not break the retry and dead set reads.
const toJob = (r: JobRow): FailedJob => ({
  id: r.id,
  queue: r.queue,
  class: r.class,
  kind: r.kind,
  args: storedJson(r.args, {}, isPlainObject),
  retry: r.retry < 0 ? false : (storedInt(r.retry, 0, 1000) ?? 0),
  retry_count: storedInt(r.retry_count, 0, 1000) ?? 0,
  created_at: storedTimeOr0(r.created_at),
  enqueued_at: storedTimeOr0(r.enqueued_at),
  run_at: storedTime(r.run_at),
  failed_at: storedTime(r.failed_at),
  error: r.error,
});

export class JobRows {
  constructor(private readonly db: Db) {}

  queueNames(): string[] {
    return this.db.all<{ name: string }>('SELECT name FROM job_queues ORDER BY created_at, name').map((r) => r.name);
  }

  addQueue(name: string, now: number): void {
    this.db.run('INSERT OR IGNORE INTO job_queues (name, created_at) VALUES (?, ?)', [name, now]);
  }

  /** Forgets a queue with its queued (also in-flight) and retrying jobs; its dead jobs stay. Returns the jobs dropped. */
  removeQueue(name: string): number {
    const dropped = this.db.run(`DELETE FROM jobs WHERE queue = ? AND state IN ('queued', 'retry')`, [name]).changes;
    this.db.run('DELETE FROM job_queues WHERE name = ?', [name]);
    return dropped;
  }

  /** Waiting jobs, including those that were running when the process stopped: they run again. */
  waiting(): Job[] {
    return this.db.all<JobRow>(`SELECT * FROM jobs WHERE state = 'queued' ORDER BY enqueued_at, id`).map(toJob);
  }

  retries(): FailedJob[] {
    return this.db.all<JobRow>(`SELECT * FROM jobs WHERE state = 'retry' ORDER BY run_at, id`).map(toJob);
  }

  /** Inserts a queued job and returns its id. Call inside a transaction when inserting many. */
  insert(job: Omit<Job, 'id'>): number {
    return this.db.run(
      `INSERT INTO jobs (queue, class, kind, args, state, retry, retry_count, created_at, enqueued_at) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?)`,
      [job.queue, job.class, job.kind, JSON.stringify(job.args), job.retry === false ? -1 : job.retry, job.retry_count, job.created_at, job.enqueued_at],
    ).lastInsertRowid;
  }

  remove(id: number): void {
    this.db.run('DELETE FROM jobs WHERE id = ?', [id]);
  }

  toRetry(id: number, retryCount: number, runAt: number, failedAt: number, error: string): void {
    this.db.run(`UPDATE jobs SET state = 'retry', retry_count = ?, run_at = ?, failed_at = ?, error = ? WHERE id = ?`, [
      retryCount, runAt, failedAt, error, id,
    ]);
  }

  toDead(id: number, retryCount: number, failedAt: number, error: string): void {
    this.db.run(`UPDATE jobs SET state = 'dead', retry_count = ?, run_at = NULL, failed_at = ?, error = ? WHERE id = ?`, [retryCount, failedAt, error, id]);
  }

  /** Drops the oldest deaths beyond `keep` (Sidekiq's dead set is bounded too: dead_max_jobs); returns how many. */
  trimDead(keep: number): number {
    return this.db.run(
      `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE state = 'dead' ORDER BY failed_at DESC, id DESC LIMIT -1 OFFSET ?)`,
      [keep],
    ).changes;
  }

  /** Back into its queue (from the retry or dead set) as of `now`. */
  requeue(id: number, now: number): void {
    this.db.run(`UPDATE jobs SET state = 'queued', enqueued_at = ?, run_at = NULL WHERE id = ?`, [now, id]);
  }

  dead(limit: number): FailedJob[] {
    return this.db.all<JobRow>(`SELECT * FROM jobs WHERE state = 'dead' ORDER BY failed_at DESC, id DESC LIMIT ?`, [limit]).map(toJob);
  }

  deadByIds(ids: number[] | undefined): FailedJob[] {
    if (!ids) return this.db.all<JobRow>(`SELECT * FROM jobs WHERE state = 'dead' ORDER BY failed_at, id`).map(toJob);
    return ids.flatMap((id) => {
      const r = this.db.get<JobRow>(`SELECT * FROM jobs WHERE id = ? AND state = 'dead'`, [id]);
      return r ? [toJob(r)] : [];
    });
  }

  countByState(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.db.all<{ state: string; n: number }>('SELECT state, count(*) AS n FROM jobs GROUP BY state')) out[r.state] = r.n;
    return out;
  }

  clearDead(): number {
    return this.db.run(`DELETE FROM jobs WHERE state = 'dead'`).changes;
  }

  counters(): { processed: number; failed: number } {
    const out = { processed: 0, failed: 0 };
    for (const r of this.db.all<{ name: string; value: number }>('SELECT name, value FROM job_counters')) {
      if (r.name === 'processed' || r.name === 'failed') out[r.name] = Number(r.value);
    }
    return out;
  }

  addCounters(processed: number, failed: number): void {
    const sql = 'INSERT INTO job_counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value';
    if (processed) this.db.run(sql, ['processed', processed]);
    if (failed) this.db.run(sql, ['failed', failed]);
  }
}
