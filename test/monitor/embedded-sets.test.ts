// The embedded connection's Retries, Scheduled and Dead sizes, as a sidekiq connection's: in its
// current sample, its history's `sets` series and its CSV's columns, on SQLite and on Redis
// (--redis, where a Sidekiq app sharing the Redis may have scheduled jobs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { waitUntil } from '../helpers/wait.ts';
import { monitor } from './support.ts';
import type { CurrentSample, History } from '../../contract/app.ts';

let redis: TestRedis;
const servers: TestServer[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await redis?.stop();
});

async function failJobs(s: TestServer): Promise<void> {
  const push = (body: Record<string, unknown>) => http(`${s.url}/api/v3/sim/jobs`, { token: s.adminToken, json: body });
  expect((await push({ queue: 'sets_dead', count: 3, fail: true, retry: 0 })).status).toBe(202);
  expect((await push({ queue: 'sets_retry', count: 2, fail: true, retry: 5 })).status).toBe(202);
  const count = async (path: string) => Number((await http(`${s.url}/api/v3/sim/jobs/${path}`, { token: s.adminToken })).headers.get('x-total'));
  await waitUntil('3 dead and 2 retrying', async () => [await count('dead'), await count('retries')], (v) => v[0] === 3 && v[1] === 2, 30_000, 50);
}

async function expectSets(s: TestServer, sizes: { retry_size: number; scheduled_size: number; dead_size: number }): Promise<void> {
  const api = (p: string) => http(`${s.url}/api/app/connections/embedded${p}`, { token: s.adminToken });
  // The range starts at this sample: earlier ones (the first, before any job failed) would be averaged into its bucket.
  const from = Date.now();
  await monitor(s).sampleNow('embedded');
  expect(((await api('/current')).body as CurrentSample).sets).toEqual(sizes);
  const range = `from=${from}&to=${Date.now() + 1000}`;
  const h = (await api(`/history?${range}`)).body as History;
  const last = (xs: (number | null)[] | undefined) => xs?.filter((v) => v !== null).at(-1);
  expect([last(h.sets?.retry), last(h.sets?.scheduled), last(h.sets?.dead)]).toEqual([sizes.retry_size, sizes.scheduled_size, sizes.dead_size]);
  const csv = String((await api(`/export.csv?${range}`)).body);
  const [head, ...rows] = csv.trim().split('\r\n');
  const cols = head!.split(',');
  expect(cols).toEqual(expect.arrayContaining(['retries', 'scheduled', 'dead']));
  const row = rows.map((r) => r.split(',')).filter((r) => r[cols.indexOf('dead')] !== '').at(-1)!;
  expect([row[cols.indexOf('retries')], row[cols.indexOf('scheduled')], row[cols.indexOf('dead')]].map(Number)).toEqual([sizes.retry_size, sizes.scheduled_size, sizes.dead_size]);
}

describe('the embedded connection’s set sizes', () => {
  it('on SQLite: retries and dead as its job system holds them, nothing scheduled', async () => {
    const s = await startServer({ mode: 'test', monitorIntervalMs: 3_600_000, jobBackoffUnitMs: 60_000 });
    servers.push(s);
    await failJobs(s);
    await expectSets(s, { retry_size: 2, scheduled_size: 0, dead_size: 3 });
  }, 60_000);

  it('on Redis (--redis): the sets as Sidekiq keeps them, a Sidekiq app’s scheduled job included', async () => {
    const url = redis.url.replace(/\/\d+$/, '/5');
    const r = new Redis(url);
    await r.zadd('schedule', Date.now() / 1000 + 3600, JSON.stringify({ class: 'LaterJob', queue: 'later', args: [], jid: 'a'.repeat(24), created_at: Date.now() / 1000 }));
    r.disconnect();
    const s = await startServer({ mode: 'test', monitorIntervalMs: 3_600_000, jobBackoffUnitMs: 60_000, redisUrl: url });
    servers.push(s);
    await failJobs(s);
    await expectSets(s, { retry_size: 2, scheduled_size: 1, dead_size: 3 });
  }, 60_000);
});
