// The sampler against real servers: this Jobscope's own job system, a second real Jobscope added
// as a remote "GitLab", a remote that fails (gaps with errors), history across a restart, and
// edge-triggered threshold alerts. Sampling time is a ManualClock: each step is one interval.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import type { Alert, ConnectionView, CurrentSample, History } from '../../contract/app.ts';
import { describeNetworkError } from '../../server/monitor/remote-client.ts';
import { ManualClock } from '../../server/clock.ts';
import { addConnection, metrics, monitor, startFakeGitLab, type FakeGitLab } from './support.ts';

// One history bucket is at least a second: a step of one interval is one more point on the chart.
const FAST = 1000;
let a: TestServer;
let clock: ManualClock;
let b: TestServer;
let fake: FakeGitLab;

/** One sampling interval on s's clock, and the samples it started stored. */
async function step(s: TestServer, c: ManualClock, times = 1): Promise<void> {
  for (let i = 0; i < times; i++) {
    c.advance(FAST);
    await monitor(s).idle();
  }
}

beforeAll(async () => {
  clock = new ManualClock();
  a = await startServer({ monitorIntervalMs: FAST }, { clock });
  b = await startServer({ monitorIntervalMs: 3_600_000 });
  fake = await startFakeGitLab();
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await fake?.close();
});

const get = <T>(s: TestServer, path: string) => http<T>(`${s.url}/api/app${path}`, { token: s.adminToken });
const connection = async (s: TestServer, id: string) => (await get<ConnectionView[]>(s, '/connections')).body.find((c) => c.id === id)!;

describe('sampler', () => {
  it('samples the embedded job system on its own, and sees jobs enqueued through the control API', async () => {
    const enq = await http(`${a.url}/api/v3/sim/jobs`, { token: a.adminToken, json: { queue: 'mailers', count: 40, duration_ms: 60_000 } });
    expect(enq.status).toBe(202);
    await step(a, clock);
    const r = await get<CurrentSample>(a, '/connections/embedded/current');
    expect(r.status).toBe(200);
    const cur = r.body;
    expect(cur.queues.mailers).toBeDefined();
    const compound = (await http(`${a.url}/api/v4/sidekiq/compound_metrics`, { token: a.adminToken })).body;
    expect(Object.keys(cur.queues).sort()).toEqual(Object.keys(compound.queues).sort());
    expect(cur.jobs.enqueued + cur.processes.reduce((n, p) => n + p.busy, 0)).toBeGreaterThan(0);
    await step(a, clock, 2);
    const h = (await get<History>(a, `/connections/embedded/history?from=${clock.now() - 60_000}&to=${clock.now()}&queues=mailers`)).body;
    expect(h.t.length).toBeGreaterThanOrEqual(3);
    expect(h.queue_names).toContain('mailers');
    expect(h.queues.mailers!.backlog.some((v) => v !== null && v > 0)).toBe(true);
    expect((await connection(a, 'embedded')).last_sample_at).not.toBeNull();
  });

  it('charts a second real Jobscope added as a remote GitLab (its /api/v4/sidekiq)', async () => {
    await http(`${b.url}/api/v3/sim/jobs`, { token: b.adminToken, json: { queue: 'remote_only', count: 30, duration_ms: 60_000 } });
    const id = await addConnection(a, { name: 'jobscope B', base_url: b.url, private_token: b.adminToken, api_version: 'v4' });
    await step(a, clock);
    const r = await get<CurrentSample>(a, `/connections/${id}/current`);
    expect(r.status).toBe(200);
    expect(r.body.queues.remote_only).toBeDefined();
    await step(a, clock);
    const h = (await get<History>(a, `/connections/${id}/history?from=${clock.now() - 60_000}&to=${clock.now()}`)).body;
    expect(h.t.length).toBeGreaterThanOrEqual(2);
    expect(h.queue_names).toContain('remote_only');
    expect(h.gaps).toEqual([]);
    const view = await connection(a, id);
    expect(view.last_error).toBeNull();
    expect(view.has_token).toBe(true);
    expect(JSON.stringify(view)).not.toContain(b.adminToken);
    expect((await http(`${a.url}/api/app/connections/${id}`, { method: 'DELETE', token: a.adminToken })).status).toBe(204);
  });

  it('records a failing remote as gaps with the error, and says what to do next', async () => {
    const id = await addConnection(a, { base_url: fake.url, private_token: 'wrong-token' });
    await step(a, clock, 2);
    const h = (await get<History>(a, `/connections/${id}/history?from=${clock.now() - 60_000}&to=${clock.now()}`)).body;
    expect(h.gaps.length).toBeGreaterThanOrEqual(2);
    expect(h.gaps[0]!.error).toMatch(/401.*check the token/);
    expect(h.totals.processed.every((v) => v === null)).toBe(true);
    const view = await connection(a, id);
    expect(view.last_error).toMatch(/401/);
    expect(view.last_sample_at).toBeNull();
    const cur = await get<{ message: string }>(a, `/connections/${id}/current`);
    expect(cur.status).toBe(404);
    expect(cur.body.message).toMatch(/check the token/);
    await http(`${a.url}/api/app/connections/${id}`, { method: 'DELETE', token: a.adminToken });
  });

  it('tells the common failures apart in a test', async () => {
    const probe = async (body: Record<string, unknown>) =>
      (await http(`${a.url}/api/app/connections/test`, { token: a.adminToken, json: { name: 't', private_token: fake.token, base_url: fake.url, ...body } })).body;
    fake.answer = { metrics: metrics({ default: [3, 1] }, { processed: 9, failed: 1 }) };
    const ok = await probe({});
    expect(ok).toMatchObject({ ok: true, status: 200 });
    expect(ok.sample.queues.default).toEqual({ backlog: 3, latency: 1 });
    expect((await probe({ private_token: 'nope' })).message).toMatch(/^401.*check the token/);
    expect((await probe({ api_version: 'v3' })).message).toMatch(/^404.*API version/);
    fake.answer = { status: 403, body: '{"message":"403 Forbidden"}', type: 'application/json' };
    expect((await probe({})).message).toMatch(/403.*not an admin/);
    fake.answer = { status: 200, body: '<html>Sign in</html>' };
    expect((await probe({})).message).toMatch(/not JSON.*base URL/);
    const closed = await startFakeGitLab();
    await closed.close(); // a port nobody listens on
    expect((await probe({ base_url: closed.url })).message).toMatch(/^connection refused by 127\.0\.0\.1:\d+: is GitLab running there/);
    // node:http, unlike fetch, has no list of refused ports: 6000 (X11) is just another closed port.
    expect((await probe({ base_url: 'http://127.0.0.1:6000' })).message).toMatch(/^connection refused by 127\.0\.0\.1:6000/);
    // DNS failures are not reproducible offline in bounded time; the mapping of undici's error is checked directly.
    const dns = describeNetworkError(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } }), 'https://gitlab.example.invalid/api', 10_000);
    expect(dns).toMatch(/gitlab\.example\.invalid not found \(DNS\).*check/);
    const bad = await http(`${a.url}/api/app/connections/test`, { token: a.adminToken, json: { name: 't', private_token: 'x', base_url: 'ftp://x' } });
    expect(bad.status).toBe(400);
  });

  it('raises exactly one alert per threshold crossing', async () => {
    const s = await startServer({ monitorIntervalMs: 3_600_000 });
    try {
      fake.answer = { metrics: metrics({ default: [10, 0] }, { processed: 0, failed: 0 }) };
      const id = await addConnection(s, { base_url: fake.url, private_token: fake.token });
      const put = await http(`${s.url}/api/app/connections/${id}/thresholds`, { method: 'PUT', token: s.adminToken, json: { queues: { default: { backlog: 5 } } } });
      expect(put.status).toBe(200);
      const m = monitor(s);
      for (let i = 0; i < 4; i++) await m.sampleNow(id);
      let alerts = (await get<Alert[]>(s, '/alerts?since=0')).body;
      expect(alerts).toHaveLength(1);
      expect(alerts[0]).toMatchObject({ connection_id: id, kind: 'backlog', queue: 'default', value: 10, threshold: 5 });
      fake.answer = { metrics: metrics({ default: [2, 0] }, { processed: 0, failed: 0 }) };
      await m.sampleNow(id);
      fake.answer = { metrics: metrics({ default: [12, 0] }, { processed: 0, failed: 0 }) };
      await m.sampleNow(id);
      await m.sampleNow(id);
      alerts = (await get<Alert[]>(s, `/alerts?since=${alerts[0]!.id}`)).body;
      expect(alerts).toHaveLength(1);
      expect(alerts[0]!.value).toBe(12);
    } finally {
      await s.close();
    }
  });

  it('keeps history across a restart of the backend', async () => {
    const c1 = new ManualClock();
    const s1 = await startServer({ monitorIntervalMs: FAST }, { clock: c1 });
    const start = c1.now();
    await step(s1, c1, 3);
    const before = (await get<History>(s1, `/connections/embedded/history?from=${start - 1000}&to=${c1.now()}`)).body;
    expect(before.t.length).toBe(3);
    await s1.close({ keepData: true });
    const s2 = await startServer({ monitorIntervalMs: 3_600_000, dataDir: s1.dataDir }, { clock: new ManualClock(c1.now()) });
    try {
      const after = (await get<History>(s2, `/connections/embedded/history?from=${start - 1000}&to=${c1.now()}`)).body;
      expect(after.t.slice(0, before.t.length)).toEqual(before.t);
      expect(after.totals.concurrency.slice(0, before.t.length)).toEqual(before.totals.concurrency);
      expect((await get(s2, '/connections/embedded/current')).status).toBe(200);
    } finally {
      await s2.close();
      fs.rmSync(s1.dataDir, { recursive: true, force: true });
    }
  });
});
