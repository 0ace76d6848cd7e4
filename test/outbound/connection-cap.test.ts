// How many connections exist and how often they are sampled are bounded: --max-watched-connections (a 409
// past it) and --min-connection-interval-s (a 400 under it), each message naming its setting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';

describe('connection cap and minimum interval', () => {
  let s: TestServer;
  beforeAll(async () => {
    // A long monitor interval: nothing is sampled while the test adds connections.
    s = await startServer({ maxWatchedConnections: 3, minConnectionIntervalS: 10, monitorIntervalMs: 3_600_000 });
  });
  afterAll(async () => s.close());
  const api = (p: string, json?: unknown, method?: string) => http(`${s.url}/api/app${p}`, { token: s.adminToken, json, method });
  const gitlab = (n: number, extra: Record<string, unknown> = {}) => ({ name: `g${n}`, base_url: `http://127.0.0.1:${n}`, private_token: 't', ...extra });

  it('refuses an interval under the minimum, and defaults to the minimum when it is above 5 s', async () => {
    const short = await api('/connections', gitlab(1, { interval_s: 5 }));
    expect(short.status).toBe(400);
    expect(short.body.message).toBe('400 (Bad request) interval_s: at least 10 s on this server (--min-connection-interval-s); give 10 or more');
    const sk = await api('/connections', { kind: 'sidekiq', name: 's', redis_url: 'redis://127.0.0.1:1/0', interval_s: 2 });
    expect(sk.status).toBe(400);
    const made = await api('/connections', gitlab(1));
    expect(made.status).toBe(201);
    expect(made.body.interval_s).toBe(10);
    const patched = await api(`/connections/${made.body.id}`, { interval_s: 3 }, 'PATCH');
    expect(patched.status).toBe(400);
    expect(patched.body.message).toMatch(/--min-connection-interval-s/);
  });

  it('refuses a connection past the cap with a 409 naming the setting, and takes one again after a delete', async () => {
    const ids: string[] = [];
    for (const n of [2, 3]) {
      const r = await api('/connections', gitlab(n, { interval_s: 10 }));
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    const over = await api('/connections', { kind: 'sidekiq', name: 's', redis_url: 'redis://127.0.0.1:1/0', interval_s: 30 });
    expect(over.status).toBe(409);
    expect(over.body.message).toBe('409 Conflict - this server watches at most 3 connections (--max-watched-connections) and has 3: delete one first, or raise the setting');
    expect((await api(`/connections/${ids[0]}`, undefined, 'DELETE')).status).toBe(204);
    expect((await api('/connections', gitlab(4, { interval_s: 60 }))).status).toBe(201);
    // The embedded connection is this server, not counted and still changeable.
    expect((await api('/connections')).body).toHaveLength(4);
  });
});
