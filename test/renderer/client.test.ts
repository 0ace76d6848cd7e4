// The renderer's one HTTP client (axios with interceptors) against a real server over real HTTP:
// the token on every call, a 401 reaching the sign-in hook, error bodies turned into the messages
// the UI shows, and the request shapes (no type on an empty POST, multipart boundary, query) seen
// by a plain node:http listener.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, Client } from '../../renderer/api/client.ts';
import { runnerConsole, sim } from '../../renderer/api/simulator.ts';
import { settings } from '../../renderer/api/settings.ts';
import { createBuild, createProject } from '../helpers/fixtures.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.close();
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ApiError);
  return e as ApiError;
}

describe('renderer client against the server', () => {
  it('sends the admin token: typed answers come back parsed', async () => {
    const c = new Client(s.url, s.adminToken);
    const inst = await c.instance();
    expect(inst.runners_registration_token).toBe(s.registrationToken);
    const view = await settings.get(c);
    expect(Array.isArray(view.settings)).toBe(true);
  });

  it('a 401 calls onUnauthorized and carries the server message', async () => {
    const c = new Client(s.url, 'not-the-token');
    let calls = 0;
    c.onUnauthorized = () => calls++;
    const e = await rejection(c.instance());
    expect(e.status).toBe(401);
    expect(e.message).toBe(e.serverMessage);
    expect(e.message.length).toBeGreaterThan(0);
    expect(calls).toBe(1);
  });

  it('an error body {"message": ...} becomes the Error message, and no 401 hook fires', async () => {
    const c = new Client(s.url, s.adminToken);
    let calls = 0;
    c.onUnauthorized = () => calls++;
    const bad = await rejection(sim.validateScenario(c, { fleets: 'nope' }));
    expect(bad.status).toBe(400);
    const direct = await fetch(`${s.url}/api/app/sim/scenario/validate`, {
      method: 'POST',
      headers: { 'PRIVATE-TOKEN': s.adminToken, 'Content-Type': 'application/json' },
      body: JSON.stringify({ fleets: 'nope' }),
    });
    expect(bad.message).toBe(((await direct.json()) as { message: string }).message);
    expect(calls).toBe(0);
  });

  it('an unknown route: the server\'s own 404 message', async () => {
    const c = new Client(s.url, s.adminToken);
    const e = await rejection(c.json('GET', '/api/app/no-such-route'));
    expect(e.status).toBe(404);
    expect(e.message).toBe('404 Not Found');
  });

  it('blob answers: an error is read out of the blob body and phrased for the caller', async () => {
    const c = new Client(s.url, s.adminToken);
    const project = await createProject(s, 'client-test');
    const build = (await createBuild(s, project.id)) as { id: number };
    const e = await rejection(c.artifacts(build.id));
    expect(e.status).toBe(404);
    expect(e.serverMessage).toBeTruthy();
    expect(e.message).toBe(`Artifacts of build ${build.id}: ${e.serverMessage}`);
    const file = await sim.exportScenario(c);
    expect(file.filename).toMatch(/\.json$/);
    expect(JSON.parse(await file.blob.text())).toBeTypeOf('object');
  });

  it('a trace read past its end is a 416 chunk, not an error', async () => {
    const c = new Client(s.url, s.adminToken);
    const project = await createProject(s, 'client-trace');
    const build = (await createBuild(s, project.id)) as { id: number };
    const whole = await c.traceFrom(build.id, 0);
    expect(whole.bytes.length).toBe(whole.length);
    const past = await c.traceFrom(build.id, (whole.length ?? 0) + 100);
    expect(past.status).toBe(416);
    expect(past.bytes.length).toBe(0);
    expect(past.buildStatus).toBe('pending');
    const missing = await rejection(c.traceFrom(99_999, 0));
    expect(missing.message).toBe('Trace of build 99999: HTTP 404');
  });

  it('JSON bodies and empty answers', async () => {
    const c = new Client(s.url, s.adminToken);
    const cleared = await sim.clearJournal(c);
    expect(cleared).toBeUndefined();
    const st = await runnerConsole.state(c);
    expect(st).toHaveProperty('target');
  });

  it('no backend: status 0 and a message that says so', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((r) => closed.close(() => r()));
    const e = await rejection(new Client(`http://127.0.0.1:${port}`, 't').status());
    expect(e.status).toBe(0);
    expect(e.message).toMatch(/^The Jobscope backend did not answer \(.+\)\. Is it still running\?$/);
  });
});

describe('renderer client request shapes', () => {
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  let echo: http.Server;
  let base = '';
  beforeAll(async () => {
    echo = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (b: Buffer) => parts.push(b));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(parts).toString('utf8') });
        // Fastify's stock answer for a route it lacks, as a backend older than the renderer gives it.
        if (req.url!.startsWith('/old/')) res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `Route ${req.method}:${req.url} not found` }));
        else if (req.url === '/plain-error') res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => echo.close(() => r()));
  });

  it('an empty POST carries no content type (no urlencoded default), a JSON one is application/json', async () => {
    const c = new Client(base, 'tok');
    await c.cancelBuild(7);
    await c.createConnection({ name: 'x', url: 'http://example.invalid', token: 't' } as never);
    const [empty, json] = seen.slice(-2);
    expect(empty!.headers['content-type']).toBeUndefined();
    expect(empty!.headers['private-token']).toBe('tok');
    expect(empty!.headers['user-agent'] ?? '').not.toMatch(/axios/);
    expect(empty!.body).toBe('');
    expect(json!.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(json!.body)).toMatchObject({ name: 'x' });
  });

  it('a FormData body goes as multipart with its boundary', async () => {
    const c = new Client(base, 'tok');
    await runnerConsole.upload(c, new Blob(['zipbytes']), 'a.zip', { expire_in: '1h' });
    const up = seen[seen.length - 1]!;
    expect(up.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(up.body).toContain('name="expire_in"');
    expect(up.body).toContain('zipbytes');
  });

  it('the query leaves out unset values', async () => {
    const c = new Client(base, 'tok');
    await c.alerts(undefined, 'embedded');
    await c.history('a b', { from: 1, to: 2, queues: '' } as never);
    const [alerts, history] = seen.slice(-2);
    expect(alerts!.url).toBe('/api/app/alerts?connection_id=embedded');
    expect(history!.url).toBe('/api/app/connections/a%20b/history?from=1&to=2');
  });

  it('a route an older backend lacks, and an error body that is not JSON', async () => {
    const c = new Client(base, 'tok');
    const old = await rejection(c.json('POST', '/old/thing', { json: {} }));
    expect(old.message).toBe('POST /old/thing is not served by this backend (404): is it an older Jobscope?');
    const plain = await rejection(c.json('GET', '/plain-error'));
    expect(plain.status).toBe(502);
    expect(plain.serverMessage).toBeUndefined();
    expect(plain.message).toBe('GET /plain-error: HTTP 502');
  });
});
