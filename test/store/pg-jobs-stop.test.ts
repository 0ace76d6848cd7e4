// JobSystem.stop() on PostgreSQL waits for the work its timers started: a periodic enqueue still in
// its transaction when the stop begins ends before the process leaves the database (leave() frees
// its claims and heartbeat; the store's pool ends right after stop()). Before, stop() resolved with
// the enqueue still waiting, which then pushed a job after the process had left, into a pool about
// to end.
import fs from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/server.ts';
import { resolveConfig } from '../../server/config.ts';
import { ManualClock } from '../../server/clock.ts';
import { JobSystem } from '../../server/jobs/job-system.ts';
import { openPgDatabase, type PgDatabase } from '../../server/store/pg/index.ts';
import { PgJobBackend } from '../../server/store/pg/job-backend.ts';
import { waitFor } from '../helpers/wait.ts';

const missing = postgresMissing();
const cluster = usePostgres();
const dir = tempDir();
const closing: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

describe.skipIf(missing)('JobSystem.stop() on PostgreSQL', () => {
  it('waits for a periodic enqueue in flight before leaving the database', async () => {
    const url = await cluster.createDatabase('stop_enqueue');
    const db: PgDatabase = await openPgDatabase(url, { max: 4 });
    closing.push(() => db.close());
    const clock = new ManualClock();
    const config = resolveConfig({ dataDir: dir, logLevel: 'silent', jobPollMs: 20, queueForgetIdleMinutes: 0 }, {});
    const backend = new PgJobBackend({ pool: db.pool, now: () => clock.now() });
    const events: string[] = [];
    const push = backend.pushUnlessWaiting.bind(backend);
    backend.pushUnlessWaiting = (job) => push(job).finally(() => events.push('pushed'));
    const leave = backend.leave.bind(backend);
    backend.leave = () => (events.push('leave'), leave());
    const warnings: unknown[] = [];
    const jobs = new JobSystem(config, backend, { clock });
    jobs.log = { warn: (obj, msg) => warnings.push([msg, obj]) };
    // Never fetched: the job system serves no queue named 'elsewhere'.
    jobs.register('tick', { class: 'TickJob', queue: 'elsewhere', retry: false, declare: false, perform: async () => undefined });
    await jobs.start();

    // Another session holds the lock enqueueOnce takes per queue and kind: the periodic push waits in its transaction.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    closing.push(() => holder.end());
    await holder.query('BEGIN');
    await holder.query(`SELECT pg_advisory_xact_lock(hashtext('jobscope-once'), hashtext('elsewhere' || chr(10) || 'tick'))`);
    jobs.every(60_000, () => jobs.enqueueOnce('tick'));
    clock.advance(60_000);
    await waitFor(
      'the periodic push waiting for the lock',
      // Not read by the holder: inside its transaction pg_stat_activity stays as first read.
      async () => (await db.pool.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'`)).rowCount === 1,
      8000,
      10,
    );

    const stopped = jobs.stop(20_000).then(() => events.push('stopped'));
    // Released once the stop has left the database, or after ~0.3 s when it waits (as it must:
    // the order below, not this wait, is what is checked).
    await waitFor('the stop to leave', () => events.includes('leave') || events.includes('stopped'), 300, 10).catch(() => undefined);
    await holder.query('COMMIT');
    await stopped;
    expect(events).toEqual(['pushed', 'leave', 'stopped']);
    // The push committed before the leave: one job waits, no process is left in the database.
    expect((await db.pool.query(`SELECT kind, claimed_by FROM jobs`)).rows).toEqual([{ kind: 'tick', claimed_by: null }]);
    expect((await db.pool.query('SELECT identity FROM job_processes')).rowCount).toBe(0);
    expect(warnings).toEqual([]);
  }, 60_000);
});
