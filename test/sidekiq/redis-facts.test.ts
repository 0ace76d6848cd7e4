// A sidekiq connection's Redis facts (INFO server, memory, clients) from a real redis-server, asked
// for on demand; a user whose ACL forbids INFO gets `refused` with Redis's reason, not an error.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import type { ConnectionView } from '../../contract/app.ts';
import type { RedisFacts } from '../../contract/redis-facts.ts';
import { infoFields, readRedisFacts } from '../../server/sidekiq/redis-facts.ts';
import { SidekiqSource } from '../../server/sidekiq/source.ts';
import { DEFAULT_CLIENT_BOUNDS } from '../../server/redis/bounded-client.ts';

let s: TestServer;
let redis: TestRedis;
let admin: Redis;

beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
  s = await startServer({ monitorIntervalMs: 3_600_000, mode: 'test', sidekiqTimeoutMs: 1500 });
}, 60_000);
afterAll(async () => {
  admin?.disconnect();
  await s?.close();
  await redis?.stop();
});

const api = (p: string, opts: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app${p}`, { token: s.adminToken, ...opts });

async function addSidekiq(name: string, redisUrl: string): Promise<ConnectionView> {
  const r = await api('/connections', { json: { name, kind: 'sidekiq', redis_url: redisUrl } });
  expect(r.status).toBe(201);
  return r.body as ConnectionView;
}

it("answers the Redis's version, memory used and peak, clients and uptime, as INFO says them", async () => {
  const c = await addSidekiq('facts', redis.url);
  const r = await api(`/connections/${c.id}/sidekiq/redis`);
  expect(r.status).toBe(200);
  const facts = r.body as RedisFacts;
  const server = infoFields(await admin.info('server'));
  const memory = infoFields(await admin.info('memory'));
  expect(facts.refused).toBeNull();
  expect(facts.version).toBe(server.get('redis_version'));
  expect(facts.used_memory).toBeGreaterThan(0);
  expect(facts.used_memory_peak).toBeGreaterThanOrEqual(facts.used_memory! / 2);
  expect(Math.abs(facts.used_memory_peak! - Number(memory.get('used_memory_peak')))).toBeLessThan(4 * 2 ** 20);
  // This client and ours, at least.
  expect(facts.connected_clients).toBeGreaterThanOrEqual(2);
  expect(Math.abs(facts.uptime_s! - Number(server.get('uptime_in_seconds')))).toBeLessThanOrEqual(2);
});

it('a user whose ACL forbids INFO gets the reason in `refused`, not a failed page', async () => {
  await admin.acl('SETUSER', 'reader', 'on', '>reader-pw', '~*', '+@read', '+@connection');
  const c = await addSidekiq('no info', redis.url.replace('redis://', 'redis://reader:reader-pw@'));
  const r = await api(`/connections/${c.id}/sidekiq/redis`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toMatchObject({ version: null, used_memory: null, used_memory_peak: null, connected_clients: null, uptime_s: null, refused: expect.stringMatching(/^NOPERM .*info/i) });
  // The same user's samples still work: INFO's refusal is no trouble of the connection's.
  expect((await api(`/connections/${c.id}/test`, { method: 'POST' })).status).toBeLessThan(500);
});

it('a Redis that is down answers 502 naming the host, not a page of nulls', async () => {
  const c = await addSidekiq('down', 'redis://127.0.0.1:1/0');
  const r = await api(`/connections/${c.id}/sidekiq/redis`);
  expect(r.status).toBe(502);
  expect((r.body as { message: string }).message).toMatch(/127\.0\.0\.1:1/);
});

it('a read that comes while a sample is connecting shares that connection instead of closing it', async () => {
  const source = new SidekiqSource({ url: redis.url, password: '', namespace: '' }, { timeoutMs: 1500, limits: { maxQueues: 10, maxProcesses: 10, days: 1 }, reply: DEFAULT_CLIENT_BOUNDS });
  try {
    const [sample, facts] = await Promise.all([source.sample(), source.use((r) => readRedisFacts(r))]);
    expect(sample).toMatchObject({ ok: true });
    expect(facts.version).toMatch(/^\d+\.\d+/);
  } finally {
    source.close();
  }
});
