// What the control API's queue views and the metrics API read of the job system on PostgreSQL
// (pg/job-backend.ts), as the Redis adapter reads Sidekiq's API: queues in byte order with their waiting
// jobs' number and oldest enqueue time, live processes from their heartbeat rows, the counters.
// Nothing is written. Waiting = 'queued' and unclaimed: a claimed job is running, as a Redis job in
// a working list is no longer in its queue.
import type { Pool } from 'pg';
import type { SharedQueue } from '../../jobs/backend.ts';
import type { Job, JobCounters } from '../../jobs/types.ts';
import type { MetricsView, ProcessStats, QueueStats } from '../../metrics/source.ts';
import { isArray, storedInt, storedTimeOr0 } from '../rows/row-values.ts';
import { DB_NOW_MS, JOB_COLUMNS, toJob, type PgJobRow } from './jobs-rows.ts';
import type { Queryable } from './connect.ts';
import { inTransaction } from './transaction.ts';

const WAITING = `state = 'queued' AND claimed_by IS NULL`;

interface QueueRow {
  name: string;
  size: number;
  oldest: number | null;
  others: number;
}

interface ProcessRow {
  hostname: string;
  pid: number;
  tag: string;
  labels: unknown;
  concurrency: number;
  started_at: number;
  queues: string[];
  busy: number;
}

// Per queue: its waiting jobs (by the partial index jobs_waiting) and the live processes other than
// this one whose heartbeat lists it. $1: this process's identity.
const QUEUE_STATS = `
  SELECT n.name,
    (SELECT count(*)::int FROM jobs j WHERE j.queue = n.name AND j.${WAITING}) AS size,
    (SELECT min(j.enqueued_at) FROM jobs j WHERE j.queue = n.name AND j.${WAITING}) AS oldest,
    (SELECT count(*)::int FROM job_processes p WHERE p.identity <> $1 AND p.expires_at > ${DB_NOW_MS} AND n.name = ANY(p.queues)) AS others
  FROM job_queues n`;

const toQueue = (r: QueueRow): SharedQueue => ({ name: r.name, size: r.size, oldestEnqueuedAt: r.oldest, otherProcesses: r.others, createdByJobscope: true });

export class PgJobReads {
  constructor(
    private readonly pool: Pool,
    private readonly o: { self: string; maxQueues: number },
  ) {}

  async counters(db: Queryable = this.pool): Promise<JobCounters> {
    const counters = { processed: 0, failed: 0 };
    for (const r of (await db.query<{ name: string; value: number }>('SELECT name, value FROM job_counters')).rows) {
      if (r.name === 'processed' || r.name === 'failed') counters[r.name] = storedInt(r.value, 0) ?? 0;
    }
    return counters;
  }

  /** Queues in byte order, at most maxQueues of them; `total` counts them all. */
  async queueList(db: Queryable = this.pool): Promise<{ queues: SharedQueue[]; total: number }> {
    const { rows } = await db.query<QueueRow & { total: number }>(
      `SELECT s.*, (SELECT count(*)::int FROM job_queues) AS total FROM (${QUEUE_STATS} ORDER BY n.name COLLATE "C" LIMIT $2) s ORDER BY s.name COLLATE "C"`,
      [this.o.self, this.o.maxQueues],
    );
    const total = rows[0]?.total ?? (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM job_queues')).rows[0]?.n ?? 0;
    return { queues: rows.map(toQueue), total };
  }

  async queueInfo(name: string): Promise<SharedQueue | null> {
    const { rows } = await this.pool.query<QueueRow>(`${QUEUE_STATS} WHERE n.name = $2`, [this.o.self, name]);
    return rows[0] ? toQueue(rows[0]) : null;
  }

  /** A page of a queue's waiting jobs in the order fetches take them; null when there is no such queue. Total and page are one snapshot. */
  async queuePage(name: string, offset: number, limit: number): Promise<{ total: number; jobs: Job[] } | null> {
    const { rows } = await this.pool.query<{ listed: boolean; total: number; page: PgJobRow[] | null }>(
      `SELECT EXISTS (SELECT 1 FROM job_queues WHERE name = $1) AS listed,
         (SELECT count(*)::int FROM jobs WHERE queue = $1 AND ${WAITING}) AS total,
         (SELECT json_agg(p ORDER BY p.enqueued_at, p.id) FROM (
            SELECT ${JOB_COLUMNS} FROM jobs WHERE queue = $1 AND ${WAITING} ORDER BY enqueued_at, id OFFSET $2 LIMIT $3) p) AS page`,
      [name, offset, limit],
    );
    const r = rows[0];
    if (!r || (!r.listed && r.total === 0)) return null;
    return { total: r.total, jobs: (r.page ?? []).map(toJob) };
  }

  async queueSize(name: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE queue = $1 AND ${WAITING}`, [name]);
    return rows[0]?.n ?? 0;
  }

  /** Queues, live processes (this one's included) and counters of one snapshot, as the metrics API reads them. */
  async view(): Promise<MetricsView> {
    const { list, procs, counters } = await inTransaction(this.pool, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', async (client) => ({
      list: (await this.queueList(client)).queues,
      procs: await client.query<ProcessRow>(
        `SELECT hostname, pid, tag, labels, concurrency, started_at, queues, json_array_length(work) AS busy
         FROM job_processes WHERE expires_at > ${DB_NOW_MS} ORDER BY identity`,
      ),
      counters: await this.counters(client),
    }));
    const queues: QueueStats[] = list.map((q) => ({
      name: q.name,
      backlog: q.size,
      latency: (now: number) => (q.oldestEnqueuedAt === null ? 0 : Math.max(0, Math.trunc((now - q.oldestEnqueuedAt) / 1000))),
    }));
    const processes: ProcessStats[] = procs.rows.map((p) => ({
      identity: { hostname: p.hostname, pid: p.pid, tag: p.tag, labels: isArray(p.labels) ? p.labels.filter((l): l is string => typeof l === 'string') : [] },
      startedAt: storedTimeOr0(p.started_at),
      concurrency: p.concurrency,
      busy: p.busy,
      version: 0,
      queueNames: () => p.queues,
    }));
    return { queues: () => queues, processes: () => processes, counters: () => counters };
  }
}
