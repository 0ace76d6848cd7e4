// A target that redirects to another origin must not receive our secrets there: origin A
// (127.0.0.1) answers every request with a 302 to origin B (127.0.0.2), which records what
// arrives. Each outbound client is pointed at A with a token; B must see none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { recordingServer, type RecordingServer } from '../helpers/recording-server.ts';
import { simulateInProcess } from '../simulator/support.ts';

const SECRET = 'foreign-admin-token-must-not-travel';

describe('a redirect to another origin carries no secret', () => {
  let s: TestServer;
  let a: RecordingServer;
  let b: RecordingServer;
  beforeAll(async () => {
    s = await startServer();
    b = await recordingServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), '127.0.0.2');
    a = await recordingServer((req, res) => res.writeHead(302, { location: `${b.url}${req.url}` }).end());
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await s.close();
  });
  const api = (p: string, json: unknown) => http(`${s.url}/api${p}`, { token: s.adminToken, json });
  const nothingAtB = () => {
    expect(b.everything()).not.toContain(SECRET);
    expect(b.received).toEqual([]);
  };

  it('jobscope simulate --admin-token: a usage error naming the redirect', async () => {
    const r = await simulateInProcess(['--target', a.url, '--admin-token', SECRET, '--runners', '1', '--builds', '1', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--target: GET \/api\/v3\/sim\/instance answered 302, a redirect to http:\/\/127\.0\.0\.2:\d+\/api\/v3\/sim\/instance; the admin token is not sent after a redirect/);
    expect(a.everything()).toContain(SECRET);
    nothingAtB();
  });

  it('the simulator API\'s fleet (its HTTP client) stops at the redirect', async () => {
    const r = await api('/app/sim/fleet', { target_url: a.url, admin_token: SECRET, registration_token: 'foreign-registration', runners: 1, builds: 1 });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/answered 302/);
    nothingAtB();
  });

  it('the runner console shows the 302 and does not follow it', async () => {
    const r = await api('/app/sim/console/register', { target_url: a.url, registration_token: SECRET });
    expect(r.body.response.status).toBe(302);
    nothingAtB();
  });

  it('a GitLab connection\'s test reports the redirect', async () => {
    const r = await api('/app/connections/test', { name: 'x', base_url: a.url, private_token: SECRET });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: false, status: 302 });
    expect(r.body.message).toMatch(/^302 redirect to http:\/\/127\.0\.0\.2/);
    nothingAtB();
  });
});
