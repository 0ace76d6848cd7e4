// The job system on PostgreSQL for several instances sharing one database (when --redis is
// not given): a SharedJobBackend (jobs/backend.ts), the same contract the Redis adapter keeps in
// Sidekiq's layout, in rows (migration 3):
// - queues: job_queues names; a waiting job is a 'queued' row no process has claimed.
// - reliable fetch: jobscope_fetch_jobs claims up to N rows (FOR UPDATE SKIP LOCKED, first non-empty
//   queue first, oldest first) for this process in one statement; the job's end deletes or moves the
//   row. Each row is claimed by one process: concurrent fetches pass over rows others hold and
//   re-check claimed_by on the newest version of a row they lock, so no job is handed out twice.
// - processes: a heartbeat row per process (job_processes), expiring processTtlMs after its last beat
//   on the database's clock. Any instance frees the claims of a process whose row expired (its jobs
//   go back to their queues, in their old place: they run next); a process leaving frees its own.
// - retries: 'retry' rows with run_at; moveDue requeues the due ones under SKIP LOCKED, so with
//   several instances each moves a job once. dead: 'dead' rows, trimmed to `keep` and 6 months.
// - counters: job_counters rows, added in the statement that records the job's end.
//
// Why rows and not LISTEN/NOTIFY or advisory locks: a claim must survive a dropped connection
// between fetch and ack (an advisory or row lock would end with the session and free a job still
// running), and must be released when the process dies, which the heartbeat tells, not the session.
//
// The pool is the caller's (the store's): leave() frees this process's claims and heartbeat but
// does not end it.
import crypto from 'node:crypto';
import os from 'node:os';
import type { Pool } from 'pg';
import type { NewJob, ProcessBeat, RecoveredJobs, SharedJobBackend, SharedQueue, SharedQueueDeletion } from '../../jobs/backend.ts';
import type { FailedJob, Job, JobCounters } from '../../jobs/types.ts';
import type { MetricsView } from '../../metrics/source.ts';
import { retryColumn } from '../rows/job-rows.ts';
import { DB_NOW_MS, JOB_COLUMNS, storableError, toJob, type PgJobRow } from './jobs-rows.ts';
import { PgJobReads } from './jobs-reads.ts';
import { inTransaction } from './transaction.ts';
import { PendingEnds } from '../pending-ends.ts';
import { StorageError } from '../ports/storage-error.ts';
import type { Queryable } from './connect.ts';

const SIX_MONTHS_MS = 180 * 24 * 3600 * 1000;

/** Drops deaths older than six months and the oldest past `keep` (Sidekiq's dead_timeout and dead_max_jobs). */
async function trimDead(client: Queryable, now: number, keep: number): Promise<void> {
  await client.query(
    `DELETE FROM jobs WHERE state = 'dead' AND (failed_at < $1 OR id IN (
       SELECT id FROM jobs WHERE state = 'dead' ORDER BY failed_at DESC, id DESC OFFSET $2))`,
    [now - SIX_MONTHS_MS, keep],
  );
}

/** How long a read or clear of the retry and dead sets waits for ends still being written. */
const SETTLE_MS = 2000;

/** A job's end as PendingEnds holds it until written. */
type PgEnd = { kind: 'done'; job: Job; counters: JobCounters } | { kind: 'retry'; job: FailedJob; counters: JobCounters } | { kind: 'dead'; job: FailedJob; counters: JobCounters; keep: number };

export interface PgJobBackendOptions {
  pool: Pool;
  /** The job system's clock: enqueue, retry and death times (heartbeats expire on the database's). */
  now: () => number;
  /** A process silent this long is dead and its jobs run again elsewhere (Sidekiq: 60 s). */
  processTtlMs?: number;
  /** Heartbeat period, ms; 0 or absent = Sidekiq's (5 s, or TTL/3 if shorter). Capped at TTL/3 so a
   *  live process's row never expires between two beats (as the Redis adapter's). */
  beatEveryMs?: number;
  /** Most queues one read lists (as --sidekiq-max-queues bounds the Redis reads). */
  maxQueuesRead?: number;
  /** Told apart in job_processes; default host:pid:random, as the Redis adapter's. */
  identity?: string;
}

// Counters added in the statement that changes the job: a job's end and its count commit together.
// `p` and `f` name the parameters holding the processed and failed counts.
const addCounters = (p: string, f: string) => `INSERT INTO job_counters (name, value)
  SELECT name, value FROM (VALUES ('processed', ${p}::bigint), ('failed', ${f}::bigint)) AS c(name, value) WHERE value <> 0
  ON CONFLICT (name) DO UPDATE SET value = job_counters.value + excluded.value`;

export class PgJobBackend implements SharedJobBackend {
  readonly shared = true as const;
  readonly identity: string;
  readonly beatEveryMs: number;
  private readonly pool: Pool;
  private readonly ttlMs: number;
  private readonly reads: PgJobReads;
  /** The beat being written: leave() waits for it, so no beat lands after the heartbeat row is removed. */
  private beating: Promise<unknown> = Promise.resolve();
  /** Set by leave(): this process takes no more part (no beats, claims, moves or recoveries). */
  private left = false;

  constructor(private readonly opts: PgJobBackendOptions) {
    this.pool = opts.pool;
    this.ttlMs = opts.processTtlMs ?? 60_000;
    // As Sidekiq: a beat every 5 s, or three per TTL when the TTL is short.
    const most = Math.max(1, Math.floor(this.ttlMs / 3));
    this.beatEveryMs = opts.beatEveryMs ? Math.min(opts.beatEveryMs, most) : Math.min(5000, most);
    this.identity = opts.identity ?? `${os.hostname()}:${process.pid}:${crypto.randomBytes(6).toString('hex')}`;
    this.reads = new PgJobReads(this.pool, { self: this.identity, maxQueues: opts.maxQueuesRead ?? 10_000 });
  }

  // ---- JobBackend ----------------------------------------------------------------------------

  async recover(): Promise<RecoveredJobs> {
    await this.recoverOrphans();
    return { queues: await this.servedQueues(), waiting: [], retries: [], counters: await this.reads.counters() };
  }

  async addQueue(name: string, now: number): Promise<void> {
    await this.pool.query('INSERT INTO job_queues (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, now]);
  }

  /** Waiting and retrying jobs go with their queues; jobs running now finish (their end deletes them), dead ones stay. */
  async deleteQueues(names: string[]): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM jobs WHERE queue = ANY($1::text[]) AND ((state = 'queued' AND claimed_by IS NULL) OR state = 'retry') RETURNING 1
       ), forgotten AS (DELETE FROM job_queues WHERE name = ANY($1::text[]))
       SELECT count(*)::int AS n FROM gone`,
      [names],
    );
    return rows[0]?.n ?? 0;
  }

  async push(jobs: NewJob[], db: Queryable = this.pool): Promise<Job[]> {
    if (jobs.length === 0) return [];
    // Inserted in the order given (ORDER BY the ordinality), so the identity values come out ascending in that order.
    const { rows } = await db.query<{ id: number }>(
      `WITH named AS (
         INSERT INTO job_queues (name, created_at) SELECT DISTINCT q, $9::bigint FROM unnest($1::text[]) AS q ON CONFLICT (name) DO NOTHING
       )
       INSERT INTO jobs (queue, class, kind, args, state, retry, retry_count, created_at, enqueued_at)
       SELECT x.queue, x.class, x.kind, x.args::json, 'queued', x.retry, x.retry_count, x.created_at, x.enqueued_at
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::bigint[], $8::bigint[])
         WITH ORDINALITY AS x(queue, class, kind, args, retry, retry_count, created_at, enqueued_at, i)
       ORDER BY x.i
       RETURNING id`,
      [
        jobs.map((j) => j.queue),
        jobs.map((j) => j.class),
        jobs.map((j) => j.kind),
        jobs.map((j) => JSON.stringify(j.args)),
        jobs.map((j) => retryColumn(j.retry)),
        jobs.map((j) => j.retry_count),
        jobs.map((j) => j.created_at),
        jobs.map((j) => j.enqueued_at),
        this.opts.now(),
      ],
    );
    const ids = rows.map((r) => r.id).sort((a, b) => a - b);
    return jobs.map((job, i) => ({ ...job, id: ids[i]! }));
  }

  /**
   * Under a transaction-scoped advisory lock per queue and kind: two instances whose periodic
   * schedules fire together take turns, and the second's check (a statement after the lock, so a
   * snapshot taken after the first committed) finds the first's job waiting.
   */
  async pushUnlessWaiting(job: NewJob): Promise<Job | null> {
    const id = await inTransaction(this.pool, 'BEGIN', async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('jobscope-once'), hashtext($1 || chr(10) || $2))`, [job.queue, job.kind]);
      const { rows } = await client.query<{ id: number }>(
        `SELECT id FROM jobs WHERE queue = $1 AND kind = $2 AND state = 'queued' AND claimed_by IS NULL LIMIT 1`,
        [job.queue, job.kind],
      );
      if (rows.length > 0) return null;
      return (await this.push([job], client))[0]!.id;
    });
    return id === null ? null : { ...job, id };
  }

  /**
   * As pushUnlessWaiting, keyed by the args too (as jsonb: key order and spacing do not matter); a
   * claimed row counts (a 'queued' row is waiting or running until its end deletes or moves it), and
   * so does a 'retry' one.
   */
  async pushUnlessPending(job: NewJob): Promise<Job | null> {
    const args = JSON.stringify(job.args);
    const id = await inTransaction(this.pool, 'BEGIN', async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('jobscope-pending'), hashtext($1 || chr(10) || $2 || chr(10) || $3::jsonb::text))`, [
        job.queue,
        job.kind,
        args,
      ]);
      const { rows } = await client.query<{ id: number }>(
        `SELECT id FROM jobs WHERE queue = $1 AND kind = $2 AND state IN ('queued', 'retry') AND args::jsonb = $3::jsonb LIMIT 1`,
        [job.queue, job.kind, args],
      );
      if (rows.length > 0) return null;
      return (await this.push([job], client))[0]!.id;
    });
    return id === null ? null : { ...job, id };
  }

  claim(): void {
    // fetch() already claimed the row for this process.
  }

  // A job's end (done, retry later, dead) is written only while this process still claims the job,
  // and its counters only with it: an end whose answer was lost in an outage is written again by
  // PendingEnds and then changes and counts nothing. Ends that fail because the database is away are
  // kept until it is back, never left for a restart (the job would run again).
  private readonly ends = new PendingEnds<PgEnd>({
    write: (batch) => this.writeEnds(batch),
    isOutage: (err) => err instanceof StorageError && (err.kind === 'unavailable' || err.kind === 'busy'),
    onOutage: () => this.troubled(),
  });

  ack(job: Job, counters: JobCounters): Promise<void> {
    return this.ends.end({ kind: 'done', job, counters });
  }

  retryLater(job: FailedJob, counters: JobCounters): Promise<void> {
    return this.ends.end({ kind: 'retry', job, counters });
  }

  kill(job: FailedJob, counters: JobCounters, keep: number): Promise<void> {
    return this.ends.end({ kind: 'dead', job, counters, keep });
  }

  /** One transaction for a turn's ends: the done ones in one statement, each failed one in its own. */
  private async writeEnds(batch: PgEnd[]): Promise<void> {
    const now = this.opts.now();
    await inTransaction(this.pool, 'BEGIN', async (client) => {
      const done = batch.filter((e) => e.kind === 'done');
      if (done.length > 0) {
        await client.query(
          `WITH gone AS (DELETE FROM jobs WHERE id = ANY($1::bigint[]) AND claimed_by = $4 RETURNING id),
           c AS (SELECT coalesce(sum(u.p), 0) AS p, coalesce(sum(u.f), 0) AS f FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS u(id, p, f) JOIN gone USING (id)),
           counted AS (${addCounters('(SELECT p FROM c)', '(SELECT f FROM c)')}) SELECT 1`,
          [done.map((e) => e.job.id), done.map((e) => e.counters.processed), done.map((e) => e.counters.failed), this.identity],
        );
      }
      let trim: number | undefined;
      for (const e of batch) {
        if (e.kind === 'done') continue;
        const failed = e.job as FailedJob;
        const set =
          e.kind === 'retry'
            ? { sql: `state = 'retry', retry_count = $4, run_at = $5, failed_at = $6, error = $7`, values: [failed.retry_count, failed.run_at ?? now, failed.failed_at, storableError(failed.error)] }
            : { sql: `state = 'dead', retry_count = $4, run_at = NULL, failed_at = $5, error = $6`, values: [failed.retry_count, failed.failed_at ?? now, storableError(failed.error)] };
        const me = `$${set.values.length + 4}`;
        await client.query(
          `WITH moved AS (
             UPDATE jobs SET ${set.sql}, claimed_by = NULL, claimed_at = NULL WHERE id = $1 AND claimed_by = ${me} RETURNING id
           ), counted AS (${addCounters('(SELECT $2::bigint FROM moved)', '(SELECT $3::bigint FROM moved)')}) SELECT 1`,
          [failed.id, e.counters.processed, e.counters.failed, ...set.values, this.identity],
        );
        if (e.kind === 'dead') trim = e.keep;
      }
      // A second statement: the trim must see the deaths just written (a CTE's change is not visible to its siblings).
      if (trim !== undefined) await trimDead(client, now, trim);
    });
  }

  /** Only rows still in the retry set move (another instance may have retried or deleted them first); Sidekiq's count is kept (types.ts). */
  async killRetries(ids: number[], now: number, keep: number): Promise<number[]> {
    return inTransaction(this.pool, 'BEGIN', async (client) => {
      const { rows } = await client.query<{ id: number }>(
        `UPDATE jobs SET state = 'dead', run_at = NULL, failed_at = $2, claimed_by = NULL, claimed_at = NULL, retry_count = GREATEST(retry_count - 1, 0) WHERE id = ANY($1::bigint[]) AND state = 'retry' RETURNING id`,
        [ids, now],
      );
      if (rows.length) await trimDead(client, now, keep);
      const killed = new Set(rows.map((r) => r.id));
      return ids.filter((id) => killed.has(id));
    });
  }

  /**
   * Only rows still in a set move (another instance may have moved or deleted them first); their queue
   * is listed again. By hand, a retry's count drops by one and a death's stays (types.ts retriedByHand).
   */
  async requeue(ids: number[], now: number, byHand = false): Promise<void> {
    await this.pool.query(
      `WITH moved AS (
         UPDATE jobs SET state = 'queued', enqueued_at = $2, run_at = NULL, claimed_by = NULL, claimed_at = NULL,
           retry_count = CASE WHEN $3 AND state = 'retry' THEN GREATEST(retry_count - 1, 0) ELSE retry_count END
         WHERE id = ANY($1::bigint[]) AND state IN ('retry', 'dead') RETURNING queue
       )
       INSERT INTO job_queues (name, created_at) SELECT DISTINCT queue, $2::bigint FROM moved ON CONFLICT (name) DO NOTHING`,
      [ids, now, byHand],
    );
  }

  async addCounters(counters: JobCounters): Promise<void> {
    if (counters.processed === 0 && counters.failed === 0) return;
    await this.pool.query(addCounters('$1', '$2'), [counters.processed, counters.failed]);
  }

  async dead(limit: number, offset = 0): Promise<FailedJob[]> {
    await this.ends.settled(SETTLE_MS);
    const { rows } = await this.pool.query<PgJobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE state = 'dead' ORDER BY failed_at DESC, id DESC LIMIT $1 OFFSET $2`, [limit, offset]);
    return rows.map(toJob);
  }

  async deadSize(): Promise<number> {
    await this.ends.settled(SETTLE_MS);
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE state = 'dead'`);
    return rows[0]?.n ?? 0;
  }

  async deleteFailed(ids: number[], set: 'retry' | 'dead'): Promise<number[]> {
    const { rows } = await this.pool.query<{ id: number }>('DELETE FROM jobs WHERE id = ANY($1::bigint[]) AND state = $2 RETURNING id', [ids, set]);
    const gone = new Set(rows.map((r) => r.id));
    return ids.filter((id) => gone.has(id));
  }

  async clearRetries(): Promise<number> {
    await this.ends.settled(SETTLE_MS);
    return (await this.pool.query(`DELETE FROM jobs WHERE state = 'retry'`)).rowCount ?? 0;
  }

  async deadByIds(ids: number[] | undefined): Promise<FailedJob[]> {
    await this.ends.settled(SETTLE_MS);
    if (!ids) return (await this.pool.query<PgJobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE state = 'dead' ORDER BY failed_at, id`)).rows.map(toJob);
    const { rows } = await this.pool.query<PgJobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ANY($1::bigint[]) AND state = 'dead'`, [ids]);
    const byId = new Map(rows.map((r) => [r.id, toJob(r)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  async clearDead(): Promise<number> {
    await this.ends.settled(SETTLE_MS);
    return (await this.pool.query(`DELETE FROM jobs WHERE state = 'dead'`)).rowCount ?? 0;
  }

  // ---- SharedJobBackend ----------------------------------------------------------------------

  /**
   * Claims up to `max` waiting jobs for this process. The heartbeat row is made live in the same
   * statement: a process that claims before its first beat (or after a long pause) is never taken
   * for dead by another instance's recoverOrphans while it holds the claim.
   */
  async fetch(queues: string[], max: number): Promise<Job[]> {
    // After leave(): a claim now would wait a whole TTL for a process that will never run it.
    if (queues.length === 0 || max < 1 || this.left) return [];
    const { rows } = await this.claimRows(queues, max).catch((err: unknown) => {
      if (err instanceof StorageError) this.troubled();
      throw err;
    });
    // The database answers again: ends kept through an outage are written now, not at the backoff's end.
    this.ends.retryNow();
    // The function answers queue by queue but a query's rows have no promised order: put them in fetch order.
    const rank = new Map(queues.map((q, i) => [q, i] as const).reverse());
    return rows
      .map(toJob)
      .sort((a, b) => rank.get(a.queue)! - rank.get(b.queue)! || a.enqueued_at - b.enqueued_at || a.id - b.id);
  }

  private claimRows(queues: string[], max: number) {
    return this.pool.query<PgJobRow>(
      `WITH alive AS (
         INSERT INTO job_processes (identity, hostname, pid, tag, concurrency, started_at, beat_at, expires_at)
         VALUES ($3, $5, $6, '', $2, ${DB_NOW_MS}, ${DB_NOW_MS}, ${DB_NOW_MS} + $7)
         ON CONFLICT (identity) DO UPDATE SET expires_at = GREATEST(job_processes.expires_at, excluded.expires_at)
       )
       SELECT ${JOB_COLUMNS} FROM jobscope_fetch_jobs($1::text[], $2, $3, $4)`,
      [queues, max, this.identity, this.opts.now(), os.hostname(), process.pid, this.ttlMs],
    );
  }

  async moveDue(now: number): Promise<number> {
    if (this.left) return 0; // the job system's poll timer may still fire during its stop
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH moved AS (
         UPDATE jobs SET state = 'queued', enqueued_at = $1, run_at = NULL
         WHERE id = ANY (ARRAY(SELECT id FROM jobs WHERE state = 'retry' AND run_at <= $1 ORDER BY run_at, id LIMIT 100 FOR UPDATE SKIP LOCKED))
           AND state = 'retry'
         RETURNING queue
       ), named AS (
         INSERT INTO job_queues (name, created_at) SELECT DISTINCT queue, $1::bigint FROM moved ON CONFLICT (name) DO NOTHING
       )
       SELECT count(*)::int AS n FROM moved`,
      [now],
    );
    return rows[0]?.n ?? 0;
  }

  /** When this process last saw the database fail a statement for an outage (epoch ms; 0: never). */
  private troubleAt = 0;

  private troubled(): void {
    this.troubleAt = Date.now();
  }

  /**
   * Frees the claims of processes whose heartbeat expired, and forgets those processes; returns the jobs freed.
   *
   * Not until this process has seen the database answer for a whole TTL since its last outage: every
   * instance was cut off alike, and a live one's row may have expired meanwhile while its jobs still
   * run and their ends wait to be written. After a TTL of answers every live process has beaten
   * again; a row still expired then is a process that is gone.
   */
  async recoverOrphans(): Promise<number> {
    if (this.left || Date.now() - this.troubleAt < this.ttlMs) return 0;
    const { rows } = await this.pool.query<{ n: number }>(
      `WITH dead AS (
         DELETE FROM job_processes WHERE expires_at <= ${DB_NOW_MS} AND identity <> $1 RETURNING identity
       ), freed AS (
         UPDATE jobs SET claimed_by = NULL, claimed_at = NULL
         WHERE claimed_by IS NOT NULL AND claimed_by <> $1
           AND NOT EXISTS (SELECT 1 FROM job_processes p WHERE p.identity = jobs.claimed_by AND p.expires_at > ${DB_NOW_MS})
         RETURNING queue
       ), named AS (
         INSERT INTO job_queues (name, created_at) SELECT DISTINCT queue, $2::bigint FROM freed ON CONFLICT (name) DO NOTHING
       )
       SELECT count(*)::int AS n FROM freed`,
      [this.identity, this.opts.now()],
    );
    return rows[0]?.n ?? 0;
  }

  beat(p: ProcessBeat): Promise<void> {
    // The job system's beat timer may fire while it stops: a process that left writes no more beats
    // (one would list it as alive for a whole TTL after it is gone).
    if (this.left) return Promise.resolve();
    const written = this.writeBeat(p).then(
      () => this.ends.retryNow(),
      (err: unknown) => {
        if (err instanceof StorageError) this.troubled();
        throw err;
      },
    );
    this.beating = written.catch(() => undefined);
    return written;
  }

  private async writeBeat(p: ProcessBeat): Promise<void> {
    // Sidekiq 6.4's workers hash: per slot the queue, the payload and run_at in whole seconds.
    const work = p.work.map((w) => ({ tid: w.tid, queue: w.queue, payload: w.payload, run_at: Math.floor(w.runAt / 1000) }));
    await this.pool.query(
      `INSERT INTO job_processes (identity, hostname, pid, tag, labels, concurrency, started_at, queues, work, beat_at, expires_at)
       VALUES ($1, $2, $3, $4, $5::json, $6, $7, $8::text[], $9::json, ${DB_NOW_MS}, ${DB_NOW_MS} + $10)
       ON CONFLICT (identity) DO UPDATE SET hostname = excluded.hostname, pid = excluded.pid, tag = excluded.tag, labels = excluded.labels,
         concurrency = excluded.concurrency, started_at = excluded.started_at, queues = excluded.queues, work = excluded.work,
         beat_at = excluded.beat_at, expires_at = excluded.expires_at`,
      [this.identity, p.hostname, p.pid, p.tag, JSON.stringify(p.labels), p.concurrency, p.startedAt, [...new Set(p.queues)], JSON.stringify(work), this.ttlMs],
    );
  }

  async retries(): Promise<FailedJob[]> {
    await this.ends.settled(SETTLE_MS);
    return (await this.pool.query<PgJobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE state = 'retry' ORDER BY run_at, id`)).rows.map(toJob);
  }

  async servedQueues(): Promise<string[]> {
    // Read by the job system's beat, which may still be under way when it stops (and its pool ends).
    if (this.left) return [];
    return (await this.pool.query<{ name: string }>('SELECT name FROM job_queues ORDER BY name COLLATE "C"')).rows.map((r) => r.name);
  }

  queueList(): Promise<{ queues: SharedQueue[]; total: number }> {
    return this.reads.queueList();
  }

  queueInfo(name: string): Promise<SharedQueue | null> {
    return this.reads.queueInfo(name);
  }

  queuePage(name: string, offset: number, limit: number): Promise<{ total: number; jobs: Job[] } | null> {
    return this.reads.queuePage(name, offset, limit);
  }

  queueSize(name: string): Promise<number> {
    return this.reads.queueSize(name);
  }

  /** Every queue here is a Jobscope server's (no Sidekiq app pushes into PostgreSQL): deleted with its jobs. */
  async deleteSharedQueue(name: string): Promise<SharedQueueDeletion> {
    if ((await this.pool.query('SELECT 1 FROM job_queues WHERE name = $1', [name])).rowCount === 0) return undefined;
    return { dropped: await this.deleteQueues([name]) };
  }

  read(): Promise<MetricsView> {
    return this.reads.view();
  }

  /** Jobs cut off by the stop go back to their queues at once (in their old place: they run next); the heartbeat goes. */
  async leave(): Promise<void> {
    // Ends still pending (the database came back late in the stop) are written before the claims
    // are freed: otherwise finished jobs would go back to their queues and run twice.
    const until = Date.now() + Math.min(this.ttlMs, 5000);
    this.ends.retryNow();
    while (this.ends.pending > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    this.ends.close('the job backend left before the database came back; the job stays claimed until its claim expires');
    this.left = true;
    await this.beating;
    await this.pool.query(
      `WITH freed AS (UPDATE jobs SET claimed_by = NULL, claimed_at = NULL WHERE claimed_by = $1)
       DELETE FROM job_processes WHERE identity = $1`,
      [this.identity],
    );
  }
}
