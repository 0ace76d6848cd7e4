// The job system of `serve --database`: two `jobscope serve --database` processes on one cluster, synthetic jobs that
// take a while, and one instance killed with SIGKILL while it runs some. Its claims stay until its
// heartbeat expires on the database's clock (--redis-process-ttl-s, beats every --redis-beat-ms);
// then the other instance frees them and runs those jobs again (at-least-once, as Sidekiq's
// super_fetch: a job cut off mid-run starts over). Nothing acknowledged runs again, nothing is
// lost, and the counters count each job's one acknowledged end.
//
// The oracle is the database itself: a trigger added by the test logs every claim, release and
// delete of a jobs row, so each job's history (who claimed it, when it ended) is read, not guessed.
import fs from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { jobscopeNodeArgs } from '../helpers/cli-process.ts';
import { spawnServer, type ChildServer } from './support.ts';
import { waitUntil } from '../helpers/wait.ts';

const ADMIN = 'admin-token-of-the-kill9-jobs-test';
const JOBS = 30;
const JOB_MS = 600; // long enough that a claim seen fresh is still held when the kill lands
const TTL_S = 3; // the smallest --redis-process-ttl-s: the one real wait of this test

const HISTORY = `
  CREATE TABLE job_history (seq bigserial PRIMARY KEY, job_id bigint NOT NULL, queue text NOT NULL, event text NOT NULL, owner text, at timestamptz NOT NULL DEFAULT clock_timestamp());
  CREATE FUNCTION job_history_log() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      INSERT INTO job_history (job_id, queue, event) VALUES (NEW.id, NEW.queue, 'push');
      RETURN NEW;
    END IF;
    IF TG_OP = 'DELETE' THEN
      INSERT INTO job_history (job_id, queue, event, owner) VALUES (OLD.id, OLD.queue, 'end', OLD.claimed_by);
      RETURN OLD;
    END IF;
    IF NEW.claimed_by IS DISTINCT FROM OLD.claimed_by THEN
      INSERT INTO job_history (job_id, queue, event, owner)
        VALUES (NEW.id, NEW.queue, CASE WHEN NEW.claimed_by IS NULL THEN 'free' ELSE 'claim' END, coalesce(NEW.claimed_by, OLD.claimed_by));
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER job_history AFTER INSERT OR UPDATE OR DELETE ON jobs FOR EACH ROW EXECUTE FUNCTION job_history_log();`;

type Proc = { pid: number; busy: number; hostname: string };

describe.skipIf(postgresMissing() !== null)('kill -9 of one serve --database instance while it runs jobs', () => {
  const cluster = usePostgres({ database: 'jobscope_k9' });
  const dataDir = tempDir();
  let a: ChildServer;
  let b: ChildServer;
  let sql: pg.Client;

  const processes = async (url: string): Promise<Proc[]> => {
    const r = await http<{ processes: Proc[] }>(`${url}/api/v3/sidekiq/process_metrics`, { token: ADMIN });
    expect(r.status).toBe(200);
    return r.body.processes;
  };
  const counters = async () => {
    const { rows } = await sql.query<{ name: string; value: string }>('SELECT name, value FROM job_counters');
    const c = { processed: 0, failed: 0 };
    for (const r of rows) if (r.name === 'processed' || r.name === 'failed') c[r.name] = Number(r.value);
    return c;
  };

  beforeAll(async () => {
    const start = () =>
      spawnServer([
        '--port', '0', '--data-dir', dataDir, '--database', cluster.url, '--admin-token', ADMIN, '--log-level', 'warn',
        // Three slots each, a fetch idle of 50 ms, beats every 100 ms; no periodic built-ins, whose
        // runs would move the counters this test reads.
        '--job-concurrency', '3', '--job-poll-ms', '50', '--redis-process-ttl-s', String(TTL_S), '--redis-beat-ms', '100',
        '--stuck-builds-every-ms', '0', '--artifact-expiry-every-ms', '0', '--runner-contact-every-ms', '0',
      ]);
    await jobscopeNodeArgs();
    [a, b] = await Promise.all([start(), start()]);
    sql = new pg.Client({ connectionString: cluster.url });
    await sql.connect();
    await sql.query(HISTORY);
  }, 60_000);
  afterAll(async () => {
    await sql?.end();
    await Promise.all([b?.stop(), a?.kill9()]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('takes over the jobs A was running: each runs to one acknowledged end, A leaves the process list after its TTL', async () => {
    const before = await counters();
    const enq = await http<{ enqueued: number }>(`${a.url}/api/v3/sim/jobs`, { token: ADMIN, json: { queue: 'k9', count: JOBS, duration_ms: JOB_MS, retry: 0 } });
    expect(enq.status).toBe(202);
    expect(enq.body.enqueued).toBe(JOBS);
    const ids = (await sql.query<{ id: string }>(`SELECT job_id AS id FROM job_history WHERE queue = 'k9' AND event = 'push' ORDER BY job_id`)).rows.map((r) => Number(r.id));
    expect(ids).toHaveLength(JOBS);

    const [procA, procB] = await Promise.all(
      [a, b].map(async (s) => (await sql.query<{ identity: string }>('SELECT identity FROM job_processes WHERE pid = $1', [s.pid])).rows[0]?.identity),
    );
    expect(procA && procB).toBeTruthy();
    // Kill A once it has ended some jobs and holds others: both kinds must come out right. "Holds"
    // means a claim made in the last 150 ms (the database's clock), so the job has most of its
    // JOB_MS left: a job seen held near its end could be acknowledged before the signal lands, and
    // the kill would then cut nothing off (seen once in CI, under load).
    await waitUntil(
      'A ending one job while holding another it claimed just now',
      async () => (await sql.query<{ ended: number; fresh: number }>(
        `SELECT (SELECT count(*)::int FROM job_history WHERE owner = $1 AND event = 'end') AS ended,
                (SELECT count(*)::int FROM jobs j WHERE j.claimed_by = $1
                   AND (SELECT max(h.at) FROM job_history h WHERE h.job_id = j.id AND h.event = 'claim' AND h.owner = $1)
                       > clock_timestamp() - interval '150 milliseconds') AS fresh`, [procA])).rows[0]!,
      (r) => r.ended >= 1 && r.fresh >= 1,
      15_000,
    );
    await a.kill9();
    const inFlight = (await sql.query<{ id: string }>('SELECT id FROM jobs WHERE claimed_by = $1 ORDER BY id', [procA])).rows.map((r) => Number(r.id));

    // Until its TTL runs out a dead process is still listed, as Sidekiq's ProcessSet lists one
    // whose heartbeat key has not expired (its busy is its last beat's).
    const listed = await processes(b.url);
    expect(listed.map((p) => p.pid).sort()).toEqual([a.pid, b.pid].sort());

    await waitUntil('every k9 job ended', async () => (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'k9'`)).rows[0]!.n, (n) => n === 0, 15_000);
    const history = (await sql.query<{ job_id: string; event: string; owner: string | null }>(`SELECT job_id, event, owner FROM job_history WHERE queue = 'k9' AND event <> 'push' ORDER BY seq`)).rows;
    const of = (id: number) => history.filter((h) => Number(h.job_id) === id).map((h) => `${h.event}:${h.owner === procA ? 'A' : h.owner === procB ? 'B' : h.owner}`);
    // Each job: one end, by the process holding its last claim. A claim of A's is either ended by A
    // (before the kill) or freed when A's heartbeat expired (by B's sweep) and the job run again on
    // B. Read from the history, not from the claims seen at the kill: a statement A sent just before
    // dying (an ack, a fetch) may still commit after it.
    const takenOver: number[] = [];
    for (const id of ids) {
      const h = of(id).join(' ');
      expect(h, `job ${id}`).toMatch(/^(claim:A free:A )+claim:B end:B$|^claim:A end:A$|^claim:B end:B$/);
      if (h.includes('free:A')) takenOver.push(id);
    }
    // Jobs A held at the kill did run again on B.
    expect(takenOver.length, `held by A at the kill: ${inFlight.join(', ')}`).toBeGreaterThan(0);
    expect(history.some((h) => h.event === 'end' && h.owner === procA)).toBe(true);
    // A job A ran to its end before the kill counted once; one cut off counted only at B's end.
    const after = await counters();
    expect({ processed: after.processed - before.processed, failed: after.failed - before.failed }).toEqual({ processed: JOBS, failed: 0 });

    // After the TTL: A's heartbeat row is gone (the sweep that freed its jobs removed it), and so is its process entry.
    expect((await sql.query('SELECT identity FROM job_processes')).rows.map((r) => r.identity)).toEqual([procB]);
    // B's entry: its busy is its last beat's, so it reads 0 once a beat after its last job is written.
    const left = await waitUntil("B's beat after its last job", () => processes(b.url), (ps) => ps.length !== 1 || ps[0]!.busy === 0, 15_000);
    expect(left.map((p) => ({ pid: p.pid, busy: p.busy }))).toEqual([{ pid: b.pid, busy: 0 }]);
    expect(b.log()).not.toMatch(/"level":(50|60)/);
  }, 60_000);
});
