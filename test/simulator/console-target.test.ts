// The runner console's target is per call: after a call to another server, a call without a target
// goes to this server again, and this server's tokens (registration, runner, admin) never reach the
// other one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { recordingServer, sendJson, type RecordingServer } from '../helpers/recording-server.ts';

const FOREIGN_RUNNER_TOKEN = 'foreign-runner-token-0123456789';

describe('runner console targets', () => {
  let s: TestServer;
  let x: RecordingServer;
  beforeAll(async () => {
    s = await startServer();
    x = await recordingServer((req, res) => {
      if (req.url.endsWith('/runners/register.json')) return sendJson(res, 201, { token: FOREIGN_RUNNER_TOKEN });
      res.writeHead(204).end();
    });
  });
  afterAll(async () => {
    await x.close();
    await s.close();
  });
  const post = (p: string, json: unknown = {}) => http(`${s.url}/api/app/sim${p}`, { token: s.adminToken, json });

  it('a call without a target goes to this server, and X never sees our tokens', async () => {
    const atX = await post('/console/register', { target_url: x.url, registration_token: 'foreign-registration-token' });
    expect(atX.status).toBe(200);
    expect(atX.body.request.url).toBe(`${x.url}/ci/api/v1/runners/register.json`);
    expect(atX.body.state).toMatchObject({ target: x.url, runner_token: FOREIGN_RUNNER_TOKEN });
    const seen = x.received.length;

    const home = await post('/console/register', { description: 'home again' });
    expect(home.status).toBe(200);
    expect(home.body.request.url).toBe(`${s.url}/ci/api/v1/runners/register.json`);
    expect(home.body.response.status).toBe(201);
    const ours = home.body.state.runner_token as string;
    expect(home.body.state.target).toBe(s.url);

    const poll = await post('/console/request-build');
    expect(poll.body.request.url).toBe(`${s.url}/ci/api/v1/builds/register.json`);

    // Our tokens named for X explicitly: refused before anything is sent.
    const reg = await post('/console/register', { target_url: x.url, registration_token: s.registrationToken });
    expect(reg.status).toBe(400);
    expect(reg.body.message).toMatch(/^400 \(Bad request\) registration_token: that is this server's own token/);
    const use = await post('/console/use-token', { target_url: x.url, runner_token: ours });
    expect(use.status).toBe(400);
    expect(use.body.message).toMatch(/runner_token: that runner is registered on this server/);
    const fleet = await http(`${s.url}/api/app/sim/fleet`, { token: s.adminToken, json: { target_url: x.url, admin_token: s.adminToken, runners: 1, builds: 1 } });
    expect(fleet.status).toBe(400);
    expect(fleet.body.message).toMatch(/admin_token: that is this server's own token/);

    expect(x.received.length).toBe(seen);
    const all = x.everything();
    for (const secret of [s.registrationToken, s.adminToken, ours]) expect(all).not.toContain(secret);
  });

  it('a refused register at X leaves the console acting as this server\'s runner, at this server', async () => {
    const home = await post('/console/register', {});
    const ours = home.body.state.runner_token as string;
    const refusing = await recordingServer((_req, res) => sendJson(res, 403, { message: '403 Forbidden' }));
    try {
      const atX = await post('/console/register', { target_url: refusing.url, registration_token: 'wrong-one-for-x' });
      expect(atX.body.response.status).toBe(403);
      expect(atX.body.state).toMatchObject({ target: s.url, runner_token: ours });
      const poll = await post('/console/request-build');
      expect(poll.body.request.url).toBe(`${s.url}/ci/api/v1/builds/register.json`);
      expect(refusing.received).toHaveLength(1);
      expect(refusing.everything()).not.toContain(ours);
    } finally {
      await refusing.close();
    }
  });
});
