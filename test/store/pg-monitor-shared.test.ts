// The monitor of two instances on one PostgreSQL database: connections, history and
// alerts are the database's, so either instance answers the same; each connection is sampled by one
// instance at a time (store/pg/monitor-session.ts), and another takes over when that one stops or
// loses its session. One ManualClock moves both instances' sampling and claims.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { http } from '../helpers/http.ts';
import { ManualClock } from '../../server/clock.ts';
import type { Monitor } from '../../server/monitor/monitor.ts';
import { databaseOf } from '../../server/store/index.ts';
import { PgAlerts } from '../../server/store/pg/monitor-alerts.ts';
import { metrics, startFakeGitLab, type FakeGitLab } from '../monitor/support.ts';
import { waitFor } from '../helpers/wait.ts';

const cluster = usePostgres();
const INTERVAL = 5_000;
const TOKEN = 'glpat-shared-monitor-token';

describe.skipIf(postgresMissing() !== null)('the monitor of two instances on one PostgreSQL database', () => {
  let a: TestServer;
  let b: TestServer;
  let url: string;
  let sql: pg.Client;
  let fake: FakeGitLab;
  const clock = new ManualClock(Date.UTC(2026, 10, 26, 12, 0, 0));
  const servers = () => [a, b].filter((s): s is TestServer => s !== undefined);
  const monitorOf = (s: TestServer) => s.server.ctx.services.get<Monitor<'later'>>('monitor')!;
  const settle = async () => {
    await Promise.all(servers().map((s) => monitorOf(s).idle()));
  };
  const step = async (ms: number) => {
    clock.advance(ms);
    await settle();
  };
  const api = (s: TestServer, p: string, opts: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app${p}`, { token: s.adminToken, ...opts });
  const samplesOf = async (id: string) => Number((await sql.query('SELECT count(*) AS n FROM monitor_samples WHERE connection_id = $1 AND tier = 0', [id])).rows[0].n);
  const polls = () => fake.requests.filter((r) => r.url === '/api/v4/sidekiq/compound_metrics').length;
  /** The instance that samples `id` now: exactly one of them. */
  const sampler = async (id: string) => {
    const s = await waitFor(`an instance sampling ${id}`, () => servers().find((x) => monitorOf(x).samples(id)));
    expect(servers().filter((x) => monitorOf(x).samples(id))).toHaveLength(1);
    return s;
  };

  beforeAll(async () => {
    url = await cluster.createDatabase('monitor_two');
    const overrides = { monitorIntervalMs: INTERVAL };
    a = await startServer(overrides, { database: url, clock });
    b = await startServer(overrides, { database: url, clock });
    sql = new pg.Client({ connectionString: url });
    await sql.connect();
    fake = await startFakeGitLab(TOKEN);
    fake.answer = { metrics: metrics({ default: [3, 1] }, { processed: 10, failed: 0 }) };
  });
  afterAll(async () => {
    await sql?.end();
    for (const s of servers()) await s.close();
    await fake?.close();
  });

  let id = '';

  it('lists a connection added on one instance on the other at once, and changes made there on the first', async () => {
    const made = await api(a, '/connections', { json: { name: 'remote', base_url: fake.url, private_token: TOKEN } });
    expect(made.status).toBe(201);
    id = made.body.id as string;
    const onB = await api(b, '/connections');
    expect((onB.body as { id: string }[]).map((c) => c.id)).toEqual(['embedded', id]);
    const renamed = await api(b, `/connections/${id}`, { method: 'PATCH', json: { name: 'renamed on b' } });
    expect(renamed.status).toBe(200);
    expect(((await api(a, '/connections')).body as { name: string }[])[1]!.name).toBe('renamed on b');
    // Nothing of it in either instance's SQLite.
    for (const s of servers()) expect(databaseOf(s.server.ctx.store).get('SELECT count(*) AS n FROM monitor_connections')).toEqual({ n: 0 });
  });

  it('samples each connection once per interval, on one instance, and both answer the same history', async () => {
    await sampler(id);
    await sampler('embedded');
    await settle();
    await step(0);
    const before = polls();
    const rowsBefore = await samplesOf(id);
    expect(rowsBefore).toBe(before);
    const range = () => `/connections/${id}/history?from=${clock.now() - 3_600_000}&to=${clock.now()}`;
    // Read once before: the instance that does not sample then follows new rows, not all of them.
    for (const s of servers()) expect((await api(s, range())).status).toBe(200);
    for (let i = 0; i < 6; i++) await step(INTERVAL);
    expect(polls() - before).toBe(6);
    expect(await samplesOf(id)).toBe(rowsBefore + 6);
    expect(await samplesOf('embedded')).toBeGreaterThanOrEqual(7);
    // The instance that does not sample follows the rows the other wrote.
    const q = range();
    const [ha, hb] = [await api(a, q), await api(b, q)];
    expect(ha.status).toBe(200);
    expect(hb.body).toEqual(ha.body);
    expect((ha.body as { t: unknown[] }).t.length).toBeGreaterThanOrEqual(6);
    const [ca, cb] = [await api(a, `/connections/${id}/current`), await api(b, `/connections/${id}/current`)];
    expect(ca.status).toBe(200);
    expect(cb.body).toEqual(ca.body);
    expect(ca.body.at).toBe(new Date(clock.now()).toISOString());
  });

  it('tells the sampling instance of an edit made on the other at once, with no claim or sample due', async () => {
    const holder = await sampler(id);
    const other = holder === a ? b : a;
    // The clock stands still here: only the notification can carry the change.
    expect((await api(other, `/connections/${id}`, { method: 'PATCH', json: { enabled: false } })).status).toBe(200);
    await waitFor('the sampling instance to let go', () => !monitorOf(holder).samples(id));
    expect((await api(other, `/connections/${id}`, { method: 'PATCH', json: { enabled: true } })).status).toBe(200);
    await sampler(id);
    await settle();
    await step(0); // the sample a (re)claimed connection takes at once
  });

  it('raises an alert once, on the sampling instance, and lists it on both', async () => {
    const put = await api(b, `/connections/${id}/thresholds`, { method: 'PUT', json: { queues: {}, default: { backlog: 10 } } });
    expect(put.status).toBe(200);
    expect((await api(a, `/connections/${id}/thresholds`)).body).toEqual({ queues: {}, default: { backlog: 10 } });
    fake.answer = { metrics: metrics({ default: [50, 1] }, { processed: 20, failed: 0 }) };
    await step(INTERVAL);
    await step(INTERVAL);
    const [la, lb] = [await api(a, `/alerts?connection_id=${id}`), await api(b, `/alerts?connection_id=${id}`)];
    expect(la.body).toHaveLength(1);
    expect(la.body).toMatchObject([{ connection_id: id, kind: 'backlog', queue: 'default', value: 50, threshold: 10 }]);
    expect(lb.body).toEqual(la.body);
    const since = (la.body as { id: number }[])[0]!.id;
    expect((await api(b, `/alerts?since=${since}`)).body).toEqual([]);
  });

  it('resolves that alert once, and an acknowledgement made on one instance is the other\'s too', async () => {
    const [fired] = (await api(a, `/alerts/board`)).body.firing as { id: number; connection_id: string }[];
    expect(fired).toMatchObject({ connection_id: id, state: 'firing', connection_name: expect.any(String) });
    const acked = await api(b, `/alerts/${fired!.id}/acknowledge`, { method: 'POST' });
    expect(acked.status).toBe(200);
    expect((await api(a, `/alerts/board`)).body.firing).toMatchObject([{ id: fired!.id, acknowledged_at: acked.body.acknowledged_at }]);
    fake.answer = { metrics: metrics({ default: [2, 1] }, { processed: 20, failed: 0 }) };
    await step(INTERVAL);
    await step(INTERVAL);
    const [ba, bb] = [await api(a, '/alerts/board'), await api(b, '/alerts/board')];
    expect(ba.body.firing).toEqual([]);
    expect(ba.body.resolved).toMatchObject([{ id: fired!.id, state: 'resolved', acknowledged_at: acked.body.acknowledged_at }]);
    expect(bb.body).toEqual(ba.body);
    // One row: the crossing was judged by the sampling instance alone, and resolved once.
    expect((await sql.query('SELECT count(*)::int AS n, count(resolved_at)::int AS r FROM monitor_alerts WHERE connection_id = $1', [id])).rows[0]).toEqual({ n: 1, r: 1 });
  });

  it('hands a connection to the other instance when the sampling one loses its database session', async () => {
    const holder = await sampler(id);
    const other = holder === a ? b : a;
    // As a crash or a cut network looks from the database: the session ends without unlocking.
    const killed = await sql.query(
      `SELECT pg_terminate_backend(l.pid) AS ok FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.objsubid = 2 AND l.objid::bigint = ((hashtext($1)::bigint + 4294967296) % 4294967296) AND s.application_name LIKE '%/monitor'`,
      [id],
    );
    expect(killed.rows).toEqual([{ ok: true }]);
    await waitFor('the holder to notice', () => !monitorOf(holder).samples(id));
    // Both claim at the next tick; the other usually wins (the old holder must reconnect first), but
    // either may: what matters is that one samples, once per interval.
    await step(1_000);
    const next = await sampler(id);
    await settle();
    const before = polls();
    const rows = await samplesOf(id);
    for (let i = 0; i < 4; i++) await step(INTERVAL);
    expect(polls() - before).toBe(4);
    expect(await samplesOf(id)).toBe(rows + 4);
    expect(servers().filter((x) => monitorOf(x).samples(id))).toEqual([next]);
    // The history survived the hand-over. The old holder reads it afresh as a follower; with the raw
    // rows of the closed minutes gone (as past the raw window), it must answer a week's range from
    // the stored 1-minute rollups, as the new holder does from memory.
    const closed = await sql.query('DELETE FROM monitor_samples WHERE connection_id = $1 AND tier = 0 AND t < (SELECT max(t) + 60000 FROM monitor_samples WHERE connection_id = $1 AND tier = 1)', [id]);
    expect(closed.rowCount).toBeGreaterThan(0);
    const q = `/connections/${id}/history?from=${clock.now() - 7 * 24 * 3_600_000}&to=${clock.now()}`;
    const theirs = await api(next, q);
    expect(theirs.status).toBe(200);
    const follower = next === holder ? other : holder;
    expect((await api(follower, q)).body).toEqual(theirs.body);
  });

  it('hands a connection to the other instance when the sampling one stops', async () => {
    const holder = await sampler(id);
    const other = holder === a ? b : a;
    await holder.close();
    if (holder === a) a = undefined as unknown as TestServer;
    else b = undefined as unknown as TestServer;
    await step(1_000);
    expect(await sampler(id)).toBe(other);
    await settle();
    const before = polls();
    const rows = await samplesOf(id);
    for (let i = 0; i < 3; i++) await step(INTERVAL);
    expect(polls() - before).toBe(3);
    expect(await samplesOf(id)).toBe(rows + 3);
    const removed = await api(other, `/connections/${id}`, { method: 'DELETE' });
    expect(removed.status).toBe(204);
    expect(await samplesOf(id)).toBe(0);
    await step(INTERVAL);
    expect(monitorOf(other).samples(id)).toBe(false);
  });

  it('gives out alert ids in commit order across sessions, so a client polling with since misses none', async () => {
    const [c1, c2] = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
    await c1.connect();
    await c2.connect();
    try {
      const alert = { connectionId: 'embedded', kind: 'backlog' as const, queue: 'q', value: 2, threshold: 1, at: clock.now() };
      await c1.query('BEGIN');
      const first = Number(await new PgAlerts(c1).addInCommitOrder(alert));
      await c2.query('BEGIN');
      const second = new PgAlerts(c2).addInCommitOrder(alert);
      // Without the order, the second would draw its id and could commit (and be seen) before the first.
      const pid = (c2 as unknown as { processID: number }).processID;
      await waitFor('the second to wait for the first to commit', async () => (await sql.query('SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [pid])).rows[0]?.wait_event_type === 'Lock' || undefined);
      await c1.query('COMMIT');
      const id2 = Number(await second);
      await c2.query('COMMIT');
      expect(id2).toBeGreaterThan(first);
    } finally {
      await c1.end();
      await c2.end();
    }
  });
});
