// Inputs that are valid on their face and used to answer 500. History and its CSV
// export read one range the same way (clamped into what a Date holds); JSON nested past a bound is a
// 400 on every route instead of a stack overflow when it is stored or answered; build options are
// bounded in size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http, RUNNER_UA } from '../helpers/http.ts';
import { createProject, registerRunner } from '../helpers/fixtures.ts';
import { control } from '../api/lib.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

const app = (path: string, opts: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app${path}`, { ...opts, token: s.adminToken });
const nested = (depth: number, leaf = '1') => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);

describe('history and export.csv read a range the same way', () => {
  const ranges = [
    ['1e20', '1e20'],
    ['-1e20', '-1e20'],
    ['8640000000000001', '8640000000000002'],
    ['-8640000000000001', '-8640000000000000'],
    [String(Date.now() - 60_000), String(Date.now())],
  ];
  for (const [from, to] of ranges) {
    it(`from=${from}&to=${to}: both answer 200`, async () => {
      const q = `from=${from}&to=${to}`;
      const h = await app(`/connections/embedded/history?${q}`);
      const csv = await app(`/connections/embedded/export.csv?${q}`);
      expect(h.status, JSON.stringify(h.body).slice(0, 200)).toBe(200);
      expect(csv.status, String(csv.body).slice(0, 200)).toBe(200);
      expect(String(csv.body).split('\r\n')[0]).toMatch(/^time_utc,processed,/);
      // The range answered is one a Date can format: what the CSV's time column and file name need.
      expect(Number.isNaN(new Date(h.body.from).getTime())).toBe(false);
      expect(Number.isNaN(new Date(h.body.to).getTime())).toBe(false);
      expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="jobscope-[A-Za-z0-9._-]+-\d{8,}-\d{4}Z\.csv"$/);
    });
  }

  it('the same ranges are refused the same way: to before from, or longer than a year', async () => {
    for (const q of ['from=10&to=5', `from=0&to=${400 * 86400_000}`, 'from=-1e20&to=1e20']) {
      const h = await app(`/connections/embedded/history?${q}`);
      const csv = await app(`/connections/embedded/export.csv?${q}`);
      expect(h.status, q).toBe(400);
      expect(csv.status, q).toBe(400);
      expect(csv.body.message).toBe(h.body.message);
    }
  });
});

describe('JSON nested too deep is a 400, not a stack overflow', () => {
  for (const depth of [5_000, 100_000]) {
    it(`build options nested ${depth} deep: 400 and nothing stored`, async () => {
      const p = await createProject(s, `deep-${depth}`);
      const r = await http(`${s.url}/api/v3/sim/projects/${p.id}/builds`, {
        method: 'POST',
        body: `{"options":${nested(depth)}}`,
        headers: { 'content-type': 'application/json' },
        token: s.adminToken,
      });
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(/nested/);
      expect((await control(s, `/builds?project_id=${p.id}`)).body).toEqual([]);
    });
  }

  it('options nested 60 deep are fine, and read back whole', async () => {
    const p = await createProject(s, 'deep-ok');
    const r = await http(`${s.url}/api/v3/sim/projects/${p.id}/builds`, {
      method: 'POST',
      body: `{"options":${nested(60, '"leaf"')}}`,
      headers: { 'content-type': 'application/json' },
      token: s.adminToken,
    });
    expect(r.status).toBe(201);
    expect(JSON.stringify((await control(s, `/builds/${r.body.id}`)).body.options)).toBe(nested(60, '"leaf"'));
  });

  it('deep arrays in options, and deep JSON sent to the runner API and the app API: 400 each', async () => {
    const p = await createProject(s, 'deep-arrays');
    const arr = await http(`${s.url}/api/v3/sim/projects/${p.id}/builds`, {
      method: 'POST',
      body: `{"options":{"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`,
      headers: { 'content-type': 'application/json' },
      token: s.adminToken,
    });
    expect(arr.status).toBe(400);
    const runner = await registerRunner(s);
    const poll = await http(`${s.url}/ci/api/v1/builds/register.json`, {
      method: 'POST',
      body: `{"token":"${runner.token}","info":${nested(10_000)}}`,
      headers: { 'content-type': 'application/json', 'user-agent': RUNNER_UA },
    });
    expect(poll.status).toBe(400);
    const conn = await app('/connections', { method: 'POST', body: `{"name":"deep","base_url":"http://127.0.0.1:1","private_token":"x","extra":${nested(10_000)}}`, headers: { 'content-type': 'application/json' } });
    expect(conn.status).toBe(400);
  });

  it('at the bound: a body nested 65 deep in its 130 characters is a 400, 64 deep passes the parser', async () => {
    // Short bodies are not walked (64 levels take 128 characters): the shortest too-deep body still is.
    const poll = (body: string) => http(`${s.url}/ci/api/v1/builds/register.json`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'user-agent': RUNNER_UA } });
    const deep = await poll('['.repeat(65) + ']'.repeat(65));
    expect(deep.status).toBe(400);
    expect(deep.body.message).toMatch(/nested more than 64/);
    // Parsed, then refused for what it lacks (no runner token), not for its depth.
    expect((await poll('['.repeat(64) + ']'.repeat(64))).status).toBe(403);
  });

  it('options over 1 MiB as JSON: 400 with the limit', async () => {
    const p = await createProject(s, 'big-options');
    const r = await control(s, `/projects/${p.id}/builds`, { method: 'POST', json: { options: { blob: 'o'.repeat(1024 * 1024 + 10) } } });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/options.*1 MiB/);
    expect((await control(s, `/builds?project_id=${p.id}`)).body).toEqual([]);
  });
});

describe('numbers a schema bounds cannot be Infinity', () => {
  // The validator coerces the strings "Infinity", "1e400" or 400 nines into Infinity, and its
  // minimum/maximum checks pass Infinity through: PUT /load with processes "Infinity" ran the
  // machine out of memory, and projects stored a build_timeout no reader can use.
  const big = ['Infinity', '-Infinity', '1e400', '9'.repeat(400)];
  for (const v of big) {
    it(`"${v.slice(0, 12)}" in query strings and JSON bodies of the control and app APIs: 400`, async () => {
      const dead = await control(s, `/jobs/dead?limit=${v}`);
      expect(dead.status).toBe(400);
      expect(dead.body.message).toMatch(/finite/);
      expect((await control(s, `/builds?limit=${v}`)).status).toBe(400);
      expect((await control(s, '/projects', { method: 'POST', json: { name: 'inf', build_timeout: v } })).status).toBe(400);
      const p = await createProject(s, `inf-${v.slice(0, 8)}`);
      for (const body of [{ timeout: v }, { depends_on: [v] }, { count: v }]) {
        expect((await control(s, `/projects/${p.id}/builds`, { method: 'POST', json: body })).status, JSON.stringify(body).slice(0, 60)).toBe(400);
      }
      expect((await control(s, `/builds?project_id=${p.id}`)).body).toEqual([]);
      expect((await control(s, '/load', { method: 'PUT', json: { processes: v } })).status).toBe(400);
      expect((await control(s, '/jobs', { method: 'POST', json: { queue: 'inf', count: v } })).status).toBe(400);
      expect((await app(`/connections/embedded/history?from=0&to=1000&points=${v}`)).status).toBe(400);
    });
  }
});
