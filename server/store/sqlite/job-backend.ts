// The job backend on SQLite (migration 3's tables). Only durable queues come here; each method is
// one transaction of a few cached statements. The size of the dead set is counted here, by the only
// writer of those rows, so trimming sorts the set only once it is over its bound.
import type { Db } from './db.ts';
import type { NewJob, RecoveredJobs, SyncJobBackend } from '../../jobs/backend.ts';
import { retriedByHand, type FailedJob, type Job, type JobCounters } from '../../jobs/types.ts';
import { jobOfRow, retryColumn, type JobRowValues } from '../rows/job-rows.ts';
import { isPlainObject, storedJson } from '../rows/row-values.ts';

interface JobRow extends JobRowValues {
  args: string;
}

const toJob = (r: JobRow): FailedJob => jobOfRow(r, storedJson(r.args, {}, isPlainObject));

const ADD_COUNTER = 'INSERT INTO job_counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value';

export class SqliteJobBackend implements SyncJobBackend {
  private deadCount = 0;

  constructor(private readonly db: Db) {}

  recover(): RecoveredJobs {
    const counters = { processed: 0, failed: 0 };
    for (const r of this.db.all<{ name: string; value: number }>('SELECT name, value FROM job_counters')) {
      if (r.name === 'processed' || r.name === 'failed') counters[r.name] = Number(r.value);
    }
    this.deadCount = this.db.get<{ n: number }>(`SELECT count(*) AS n FROM jobs WHERE state = 'dead'`)?.n ?? 0;
    return {
      queues: this.db.all<{ name: string }>('SELECT name FROM job_queues ORDER BY created_at, name').map((r) => r.name),
      // Rows stay 'queued' while their job runs, so those cut off by a crash are among these.
      waiting: this.db.all<JobRow>(`SELECT * FROM jobs WHERE state = 'queued' ORDER BY enqueued_at, id`).map(toJob),
      retries: this.db.all<JobRow>(`SELECT * FROM jobs WHERE state = 'retry' ORDER BY run_at, id`).map(toJob),
      counters,
    };
  }

  addQueue(name: string, now: number): void {
    this.db.run('INSERT OR IGNORE INTO job_queues (name, created_at) VALUES (?, ?)', [name, now]);
  }

  deleteQueues(names: string[]): number {
    return this.db.tx(() => {
      let dropped = 0;
      for (const name of names) {
        dropped += this.db.run(`DELETE FROM jobs WHERE queue = ? AND state IN ('queued', 'retry')`, [name]).changes;
        this.db.run('DELETE FROM job_queues WHERE name = ?', [name]);
      }
      return dropped;
    });
  }

  push(jobs: NewJob[]): Job[] {
    return this.db.tx(() =>
      jobs.map((job) => ({
        ...job,
        id: this.db.run(
          `INSERT INTO jobs (queue, class, kind, args, state, retry, retry_count, created_at, enqueued_at) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?)`,
          [job.queue, job.class, job.kind, JSON.stringify(job.args), retryColumn(job.retry), job.retry_count, job.created_at, job.enqueued_at],
        ).lastInsertRowid,
      })),
    );
  }

  claim(): void {
    // The row stays 'queued' until ack: see the interface.
  }

  ack(job: Job, counters: JobCounters): void {
    this.db.tx(() => {
      this.db.run('DELETE FROM jobs WHERE id = ?', [job.id]);
      this.writeCounters(counters);
    });
  }

  retryLater(job: FailedJob, counters: JobCounters): void {
    this.db.tx(() => {
      this.db.run(`UPDATE jobs SET state = 'retry', retry_count = ?, run_at = ?, failed_at = ?, error = ? WHERE id = ?`, [
        job.retry_count, job.run_at, job.failed_at, job.error, job.id,
      ]);
      this.writeCounters(counters);
    });
  }

  kill(job: FailedJob, counters: JobCounters, keep: number): void {
    let dead = this.deadCount;
    this.db.tx(() => {
      this.db.run(`UPDATE jobs SET state = 'dead', retry_count = ?, run_at = NULL, failed_at = ?, error = ? WHERE id = ?`, [
        job.retry_count, job.failed_at, job.error, job.id,
      ]);
      if (++dead > keep) dead -= this.trimDead(keep);
      this.writeCounters(counters);
    });
    this.deadCount = dead;
  }

  killRetries(ids: number[], now: number, keep: number): number[] {
    const killed: number[] = [];
    let dead = this.deadCount;
    this.db.tx(() => {
      // Sidekiq's count is kept (types.ts).
      for (const id of ids) {
        if (this.db.run(`UPDATE jobs SET state = 'dead', run_at = NULL, failed_at = ?, retry_count = MAX(retry_count - 1, 0) WHERE id = ? AND state = 'retry'`, [now, id]).changes === 1) killed.push(id);
      }
      dead += killed.length;
      if (killed.length && dead > keep) dead -= this.trimDead(keep);
    });
    this.deadCount = dead;
    return killed;
  }

  requeue(ids: number[], now: number, byHand = false): void {
    let revived = 0;
    this.db.tx(() => {
      for (const id of ids) {
        const row = this.db.get<{ state: string; retry_count: number }>('SELECT state, retry_count FROM jobs WHERE id = ?', [id]);
        if (!row) continue;
        if (row.state === 'dead') revived++;
        const count = byHand && (row.state === 'retry' || row.state === 'dead') ? retriedByHand(row.retry_count, row.state) : row.retry_count;
        this.db.run(`UPDATE jobs SET state = 'queued', enqueued_at = ?, run_at = NULL, retry_count = ? WHERE id = ?`, [now, count, id]);
      }
    });
    this.deadCount -= revived;
  }

  /** Drops the oldest deaths past `keep` (Sidekiq's dead_max_jobs); answers how many. */
  private trimDead(keep: number): number {
    return this.db.run(`DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE state = 'dead' ORDER BY failed_at DESC, id DESC LIMIT -1 OFFSET ?)`, [keep]).changes;
  }

  addCounters(counters: JobCounters): void {
    this.db.tx(() => this.writeCounters(counters));
  }

  dead(limit: number, offset = 0): FailedJob[] {
    return this.db.all<JobRow>(`SELECT * FROM jobs WHERE state = 'dead' ORDER BY failed_at DESC, id DESC LIMIT ? OFFSET ?`, [limit, offset]).map(toJob);
  }

  deadSize(): number {
    return this.deadCount;
  }

  deleteFailed(ids: number[], set: 'retry' | 'dead'): number[] {
    const gone = this.db.tx(() => ids.filter((id) => this.db.run('DELETE FROM jobs WHERE id = ? AND state = ?', [id, set]).changes > 0));
    if (set === 'dead') this.deadCount -= gone.length;
    return gone;
  }

  clearRetries(): number {
    return this.db.tx(() => this.db.run(`DELETE FROM jobs WHERE state = 'retry'`).changes);
  }

  deadByIds(ids: number[] | undefined): FailedJob[] {
    if (!ids) return this.db.all<JobRow>(`SELECT * FROM jobs WHERE state = 'dead' ORDER BY failed_at, id`).map(toJob);
    return ids.flatMap((id) => {
      const r = this.db.get<JobRow>(`SELECT * FROM jobs WHERE id = ? AND state = 'dead'`, [id]);
      return r ? [toJob(r)] : [];
    });
  }

  clearDead(): number {
    const n = this.db.tx(() => this.db.run(`DELETE FROM jobs WHERE state = 'dead'`).changes);
    this.deadCount = 0;
    return n;
  }

  private writeCounters({ processed, failed }: JobCounters): void {
    if (processed) this.db.run(ADD_COUNTER, ['processed', processed]);
    if (failed) this.db.run(ADD_COUNTER, ['failed', failed]);
  }
}
