// A saved Redis URL is tried before it is saved (settings-api/reachable.ts): one that cannot be
// reached now is refused with what failed and what to do, unless the request confirms it is wanted
// for a later start. Against real redis-servers: one running, one stopped with SIGSTOP (it accepts
// connections and answers nothing), and a port nothing listens on.
// A saved connection cap so low that the UI could not open its connections is refused too.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { freePort, startRedis, type TestRedis } from '../helpers/redis.ts';

interface SettingsAnswer {
  message?: string;
  settings: { name: string; saved: unknown }[];
  saved_warnings?: string[];
}

describe('saving a Redis URL', () => {
  let s: TestServer;
  let live: TestRedis;
  let frozen: TestRedis;
  beforeAll(async () => {
    [s, live, frozen] = await Promise.all([startServer({ sidekiqTimeoutMs: 1500 }), startRedis(), startRedis()]);
    frozen.pause();
  });
  afterAll(async () => {
    await s?.close();
    await live?.stop();
    await frozen?.stop();
  });

  const put = (body: unknown) => http<SettingsAnswer>(`${s.url}/api/app/settings`, { method: 'PUT', json: body, token: s.adminToken });
  const savedRedis = async () => (await http<SettingsAnswer>(`${s.url}/api/app/settings`, { token: s.adminToken })).body.settings.find((x) => x.name === 'redis')!.saved;
  const onDisk = () => {
    try {
      return JSON.parse(fs.readFileSync(path.join(s.dataDir, 'settings.json'), 'utf8')) as Record<string, unknown>;
    } catch {
      return {};
    }
  };

  it('nothing listening: 400 saying the connection was refused and what to do; nothing saved', async () => {
    const port = await freePort();
    const res = await put({ values: { redis: `redis://127.0.0.1:${port}/0`, 'max-artifact-mb': 9 } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      `400 (Bad request) redis: redis://127.0.0.1:${port}/0: connection refused by 127.0.0.1:${port}: is redis-server running there, and is the port right? ` +
        'Nothing was saved: start that service or correct the value; to save it anyway for a later start where it will be reachable, send "confirm_unreachable": true with it',
    );
    expect(await savedRedis()).toBeNull();
    // All or nothing: the other value of the request was not saved either.
    expect(onDisk()['max-artifact-mb']).toBeUndefined();
  });

  it('a stopped Redis (SIGSTOP): 400 within the timeout, saying nothing answered', async () => {
    const res = await put({ values: { redis: frozen.url } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(`no answer from Redis at 127.0.0.1:${frozen.port} within 1.5 s`);
    expect(await savedRedis()).toBeNull();
  });

  it('a password never appears in the refusal', async () => {
    const port = await freePort();
    const res = await put({ values: { redis: `redis://:s3cret-pw@127.0.0.1:${port}/0` } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(`redis://:***@127.0.0.1:${port}/0`);
    expect(res.body.message).not.toContain('s3cret-pw');
  });

  it('not a Redis URL: 400 at once with the form to use', async () => {
    const res = await put({ values: { redis: 'http://127.0.0.1:6379' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/only redis:\/\/ and rediss:\/\/ \(TLS\) URLs work/);
  });

  it('a running Redis: saved, without a warning', async () => {
    const res = await put({ values: { redis: live.url } });
    expect(res.status).toBe(200);
    expect(res.body.saved_warnings).toBeUndefined();
    expect(await savedRedis()).toBe(live.url);
    expect(onDisk().redis).toBe(live.url);
  });

  it('confirm_unreachable: saved, and the answer warns what failed', async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}/3`;
    const res = await put({ values: { redis: url }, confirm_unreachable: true });
    expect(res.status).toBe(200);
    expect(res.body.saved_warnings).toEqual([
      `redis: ${url}: connection refused by 127.0.0.1:${port}: is redis-server running there, and is the port right?; saved anyway (confirm_unreachable): the next start needs it reachable`,
    ]);
    expect(onDisk().redis).toBe(url);
  });

  it('removing the saved Redis (null) tries nothing', async () => {
    const res = await put({ values: { redis: null } });
    expect(res.status).toBe(200);
    expect(await savedRedis()).toBeNull();
  });
});

describe('saving a connection cap', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(async () => s?.close());

  it('a cap of a few is refused (it would shut the UI out at the next start); 0 and 64 are saved', async () => {
    const put = (values: Record<string, unknown>) => http<{ message?: string }>(`${s.url}/api/app/settings`, { method: 'PUT', json: { values }, token: s.adminToken });
    const low = await put({ 'max-connections-per-address': 3 });
    expect(low.status).toBe(400);
    expect(low.body.message).toContain('--max-connections-per-address: a saved cap below 64');
    expect((await put({ 'max-connections': 64, 'max-connections-per-address': 0 })).status).toBe(200);
  });
});
