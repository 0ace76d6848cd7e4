// An enqueue whose jobs were committed must answer 202, whatever happens to PostgreSQL next. The
// enqueue route reads the queue's backlog after the push; when the database died between the two,
// it answered 503, and a client (the model-based suite among them) took "503" for "not enqueued"
// while the jobs ran: counted as a job run twice.
//
// The window made wide with a real fault: a trigger spins (CPU, no latch wait, so the backend does
// not notice its postmaster's death) inside the push, the postmaster is killed with SIGKILL while it
// spins, the push still commits, and the backend exits as it goes idle: the backlog read that
// follows finds no database. A table the trigger writes in the push's transaction tells whether the
// push committed.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { http } from '../helpers/http.ts';
import { waitUntil } from '../helpers/wait.ts';

const QUEUE = 'slow-push';

const SLOW_PUSH = `
  CREATE TABLE pushed (job_id bigint NOT NULL);
  CREATE FUNCTION slow_push() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO pushed (job_id) VALUES (NEW.id);
    WHILE clock_timestamp() < statement_timestamp() + interval '1500 ms' LOOP END LOOP;
    RETURN NEW;
  END $$;
  CREATE TRIGGER slow_push AFTER INSERT ON jobs FOR EACH ROW WHEN (NEW.queue = '${QUEUE}') EXECUTE FUNCTION slow_push();`;

describe.skipIf(postgresMissing() !== null)('an enqueue committed just before PostgreSQL is killed', () => {
  let cluster: TestPostgres;
  let s: TestServer;

  const withSql = async <T>(f: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: cluster.url });
    await c.connect();
    try {
      return await f(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  };

  beforeAll(async () => {
    cluster = await startPostgres();
    s = await startServer({ stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0 }, { database: cluster.url });
    await withSql((c) => c.query(SLOW_PUSH));
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await cluster?.stop();
  });

  it('answers 202 for jobs it made, though the backlog cannot be read after the push', { timeout: 90_000 }, async () => {
    const answer = http(`${s.url}/api/v3/sim/jobs`, { method: 'POST', token: s.adminToken, json: { queue: QUEUE, count: 3 } });
    await withSql((c) =>
      waitUntil(
        'the push spinning in its trigger',
        async () => (await c.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND state = 'active' AND query LIKE '%INSERT INTO jobs%'`)).rows[0].n as number,
        (n) => n > 0,
      ),
    );
    await cluster.halt('kill');
    const r = await answer;
    await cluster.resume();
    const made = await withSql(async (c) => (await c.query('SELECT count(*)::int AS n FROM pushed')).rows[0].n as number);
    // The fault landed where this test needs it: the push committed in spite of the kill.
    expect(made).toBe(3);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body).toMatchObject({ queue: QUEUE, enqueued: 3 });
  });
});
