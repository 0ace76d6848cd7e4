// The app API over real HTTP: auth, connection CRUD and validation, the embedded connection's
// limits, thresholds, status, CSV export, and that a remote's token never leaves the backend
// (no answer, no log line).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import type { ConnectionView } from '../../contract/app.ts';
import { addConnection, metrics, monitor, startFakeGitLab, type FakeGitLab } from '../monitor/support.ts';

const REMOTE_TOKEN = 'glpat-SECRET-remote-token-4711';
let s: TestServer;
let fake: FakeGitLab;

beforeAll(async () => {
  s = await startServer({ monitorIntervalMs: 3_600_000, logLevel: 'debug', mode: 'test' });
  fake = await startFakeGitLab(REMOTE_TOKEN);
});
afterAll(async () => {
  await s.close();
  await fake.close();
});

const api = (p: string, opts: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app${p}`, { token: s.adminToken, ...opts });

describe('app API', () => {
  it('wants the admin token', async () => {
    expect((await http(`${s.url}/api/app/connections`)).status).toBe(401);
    expect((await http(`${s.url}/api/app/status`, { token: 'wrong' })).status).toBe(401);
  });

  it('reports status with the host mode', async () => {
    const r = await api('/status');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ mode: 'test', data_dir: s.dataDir });
    expect(r.body.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('always has the embedded connection, which can change but not go', async () => {
    const list = (await api('/connections')).body as ConnectionView[];
    expect(list[0]).toMatchObject({ id: 'embedded', kind: 'embedded', base_url: null, has_token: false, interval_s: 5 });
    const del = await api('/connections/embedded', { method: 'DELETE' });
    expect(del.status).toBe(400);
    expect(del.body.message).toMatch(/disable it instead/);
    const bad = await api('/connections/embedded', { method: 'PATCH', json: { base_url: 'http://x' } });
    expect(bad.status).toBe(400);
    const ok = await api('/connections/embedded', { method: 'PATCH', json: { interval_s: 10, name: 'Here' } });
    expect(ok.body).toMatchObject({ interval_s: 10, name: 'Here' });
  });

  it('adds, changes and removes a remote connection, validating input', async () => {
    for (const body of [
      { name: 'x', base_url: 'not a url', private_token: 't' },
      { name: 'x', base_url: 'https://user:pw@gitlab.example.com', private_token: 't' },
      { name: 'x', base_url: 'https://gitlab.example.com', private_token: 't', interval_s: 1 },
      { name: 'x', base_url: 'https://gitlab.example.com', private_token: 't', interval_s: 61 },
      { name: 'x', base_url: 'https://gitlab.example.com', private_token: 't', segment: '../etc' },
      { name: 'x', base_url: 'https://gitlab.example.com', private_token: 't', api_version: 'v5' },
      { name: 'x', base_url: 'https://gitlab.example.com' },
    ]) {
      const r = await api('/connections', { json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message).toMatch(/^400/);
    }
    const created = await api('/connections', { json: { name: 'gl', base_url: 'https://gitlab.example.com/gitlab/', private_token: 'tok', api_version: 'v3', enabled: false } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'gitlab', base_url: 'https://gitlab.example.com/gitlab', api_version: 'v3', segment: 'sidekiq', interval_s: 5, enabled: false, has_token: true });
    expect(created.body).not.toHaveProperty('private_token');
    const id = created.body.id as string;
    const patched = await api(`/connections/${id}`, { method: 'PATCH', json: { segment: 'jobqueue', interval_s: 30 } });
    expect(patched.body).toMatchObject({ segment: 'jobqueue', interval_s: 30 });
    expect((await api(`/connections/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/connections/${id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await api(`/connections/${id}/current`)).status).toBe(404);
  });

  it('stores and returns thresholds, refusing bad ones', async () => {
    const t = { queues: { mailers: { latency: 30, backlog: 100 } }, default: { backlog: 1000 }, failure_rate: 0.5 };
    expect((await api('/connections/embedded/thresholds', { method: 'PUT', json: t })).body).toEqual(t);
    expect((await api('/connections/embedded/thresholds')).body).toEqual(t);
    expect((await api('/connections/embedded/thresholds', { method: 'PUT', json: { queues: { a: { backlog: -1 } } } })).status).toBe(400);
  });

  it('exports the downsampled range as CSV with a header row', async () => {
    const id = await addConnection(s, { name: 'Prod Köln / "EU" #2', base_url: fake.url, private_token: REMOTE_TOKEN, enabled: false });
    const m = monitor(s);
    const c = m.connections.get(id)!;
    const t0 = Math.floor((Date.now() - 3_600_000) / 60_000) * 60_000;
    for (let i = 0; i < 24; i++) m.record(c, t0 + i * 5000, metrics({ 'a,"quoted"': [i, 2], '=cmd': [1, 0] }, { processed: 10 * i, failed: 0 }), '');
    m.record(c, t0 + 24 * 5000, null, 'connection refused by x: is GitLab running there?');
    const r = await api(`/connections/${id}/export.csv?from=${t0}&to=${t0 + 125_000}&points=1000`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(r.headers.get('content-disposition')).toMatch(/attachment; filename="jobscope-.*\.csv"/);
    // Named after the connection, reduced to what file systems and the header accept; the start in UTC.
    const d = new Date(t0).toISOString();
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="jobscope-Prod-Koln-EU-2-${d.slice(0, 10).replace(/-/g, '')}-${d.slice(11, 16).replace(':', '')}Z.csv"`);
    const lines = (r.body as string).trimEnd().split('\r\n');
    expect(lines[0]).toBe('time_utc,processed,failed,enqueued,busy,concurrency,processes,processed_per_s,failed_per_s,"backlog:a,""quoted""","latency_s:a,""quoted""",backlog:=cmd,latency_s:=cmd,error');
    expect(lines).toHaveLength(1 + 25);
    expect(lines[1]).toBe(`${new Date(t0).toISOString()},0,0,0,0,25,1,,,0,2,1,0,`);
    expect(lines[2]).toBe(`${new Date(t0 + 5000).toISOString()},10,0,0,0,25,1,2,0,1,2,1,0,`);
    expect(lines[25]).toBe(`${new Date(t0 + 120_000).toISOString()},,,,,,,,,,,,,connection refused by x: is GitLab running there?`);
  });

  it('wants the token again when the URL moves to another host, and never sends the old one there', async () => {
    // A second real server that records every PRIVATE-TOKEN it is sent.
    const other = await startFakeGitLab('glpat-other-host-token');
    try {
      const id = await addConnection(s, { base_url: fake.url, private_token: REMOTE_TOKEN, enabled: false });
      const moved = await api(`/connections/${id}`, { method: 'PATCH', json: { base_url: other.url } });
      expect(moved.status).toBe(400);
      expect(moved.body.message).toMatch(/private_token/);
      expect(moved.body.message).toContain(new URL(other.url).host);
      const m = monitor(s);
      await m.sampleNow(id);
      await api(`/connections/${id}/test`, { method: 'POST' });
      expect(other.requests).toEqual([]); // the refused PATCH changed nothing
      // The same host under another path keeps its token: only the origin decides where it may go.
      const samePath = await api(`/connections/${id}`, { method: 'PATCH', json: { base_url: `${fake.url}/` } });
      expect(samePath.status).toBe(200);
      const ok = await api(`/connections/${id}`, { method: 'PATCH', json: { base_url: other.url, private_token: 'glpat-other-host-token' } });
      expect(ok.status).toBe(200);
      expect(ok.body).toMatchObject({ base_url: other.url, has_token: true, warnings: [] });
      await m.sampleNow(id);
      expect(other.requests.length).toBeGreaterThan(0);
      expect(other.requests.map((r) => r.token)).not.toContain(REMOTE_TOKEN);
      expect(other.requests.every((r) => r.token === 'glpat-other-host-token')).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('warns when a token would travel over plain http to another machine', async () => {
    const plain = await api('/connections', { json: { name: 'plain', base_url: 'http://gitlab.example.com', private_token: 't', enabled: false } });
    expect(plain.status).toBe(201);
    expect(plain.body.warnings).toHaveLength(1);
    expect(plain.body.warnings[0]).toMatch(/plain http/);
    const listed = ((await api('/connections')).body as ConnectionView[]).find((c) => c.id === plain.body.id)!;
    expect(listed.warnings).toEqual(plain.body.warnings);
    const tls = await api(`/connections/${plain.body.id}`, { method: 'PATCH', json: { base_url: 'https://gitlab.example.com', private_token: 't2' } });
    expect(tls.body.warnings).toEqual([]);
    for (const local of ['http://127.0.0.1:9', 'http://localhost:9', 'http://[::1]:9']) {
      const r = await api('/connections', { json: { name: 'local', base_url: local, private_token: 't', enabled: false } });
      expect(r.body.warnings, local).toEqual([]);
    }
    const embedded = ((await api('/connections')).body as ConnectionView[])[0]!;
    expect(embedded.warnings).toEqual([]);
  });

  it('never shows a remote token in an answer or in the log file', async () => {
    fake.answer = { metrics: metrics({ default: [1, 0] }, { processed: 1, failed: 0 }) };
    const id = await addConnection(s, { base_url: fake.url, private_token: REMOTE_TOKEN });
    const m = monitor(s);
    await m.sampleNow(id);
    await api(`/connections/${id}`, { method: 'PATCH', json: { private_token: 'glpat-SECRET-wrong-0815' } });
    await m.sampleNow(id);
    expect(fake.requests.some((r) => r.token === REMOTE_TOKEN)).toBe(true); // it was really used
    const answers = await Promise.all(
      [
        '/connections',
        `/connections/${id}/current`,
        `/connections/${id}/history?from=0&to=${Date.now()}`,
        `/connections/${id}/export.csv?from=0&to=${Date.now()}`,
        '/alerts',
      ].map((p) => api(p)),
    );
    answers.push(await api(`/connections/${id}/test`, { method: 'POST' }));
    answers.push(await api('/connections/test', { json: { name: 'x', base_url: fake.url, private_token: REMOTE_TOKEN } }));
    for (const a of answers) {
      expect(a.raw.toString()).not.toContain('SECRET');
    }
    const view = ((await api('/connections')).body as ConnectionView[]).find((c) => c.id === id)!;
    expect(view.last_error).toMatch(/401/);
    const logs = s.server.ctx.store.layout.logsDir;
    const text = fs.readdirSync(logs).map((f) => fs.readFileSync(path.join(logs, f), 'utf8')).join('\n');
    expect(text).toContain(`connection ${id}`); // the failure was logged…
    expect(text).not.toContain('SECRET'); // …without the token
  });
});
