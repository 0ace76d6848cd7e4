// What each sample may store, whatever the connection's kind: a real Redis with three 5 MiB queue
// names (a sidekiq connection) and a GitLab answering one (a remote connection) leave the database
// and /current small; the long names are counted, never stored; the sample's other queues are kept.
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { metrics, monitor, startFakeGitLab, type FakeGitLab } from './support.ts';
import type { ConnectionView } from '../../contract/app.ts';
import { boundSample, cutBytes } from '../../server/monitor/sample-bounds.ts';

const HUGE = 5 * 2 ** 20;
let s: TestServer;
let redis: TestRedis;
let gitlab: FakeGitLab;

beforeAll(async () => {
  redis = await startRedis();
  gitlab = await startFakeGitLab();
  s = await startServer({ monitorIntervalMs: 3_600_000, mode: 'test' });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await gitlab?.close();
  await redis?.stop();
});

const api = (p: string, opts: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app${p}`, { token: s.adminToken, ...opts });

/** Bytes of the database files in the data dir. */
function dbBytes(): number {
  return fs
    .readdirSync(s.dataDir)
    .filter((f) => f.startsWith('jobscope.db'))
    .reduce((n, f) => n + fs.statSync(path.join(s.dataDir, f)).size, 0);
}

async function sampleTimes(id: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await monitor(s).sampleNow(id);
}

it('a sidekiq connection whose Redis has three 5 MiB queue names: the database and /current stay small, the names are counted', async () => {
  const r = new Redis(redis.url);
  try {
    for (const c of ['a', 'b', 'c']) await r.sadd('queues', c.repeat(HUGE));
    await r.sadd('queues', 'default');
    await r.lpush('queue:default', JSON.stringify({ class: 'A', args: [], jid: 'x', enqueued_at: Date.now() / 1000 }));
  } finally {
    r.disconnect();
  }
  const before = dbBytes();
  const c = (await api('/connections', { json: { name: 'huge names', kind: 'sidekiq', redis_url: redis.url } })).body as ConnectionView;
  await sampleTimes(c.id, 5);
  const cur = await api(`/connections/${c.id}/current`);
  expect(cur.status).toBe(200);
  expect(Object.keys(cur.body.queues)).toEqual(['default']);
  expect(cur.body.sidekiq.queues_total).toBe(4);
  expect(JSON.stringify(cur.body).length).toBeLessThan(16_384);
  expect(dbBytes() - before).toBeLessThan(2 * 2 ** 20);
});

it('a GitLab answering a 5 MiB queue name: the database and /current stay small, the name is counted as untracked', async () => {
  gitlab.answer = { metrics: metrics({ ['x'.repeat(HUGE)]: [1, 2], default: [3, 4] }, { processed: 1, failed: 0 }) };
  const before = dbBytes();
  const c = (await api('/connections', { json: { name: 'gl', base_url: gitlab.url, private_token: gitlab.token } })).body as ConnectionView;
  await sampleTimes(c.id, 5);
  const cur = await api(`/connections/${c.id}/current`);
  expect(cur.status).toBe(200);
  expect(Object.keys(cur.body.queues)).toEqual(['default']);
  expect(JSON.stringify(cur.body).length).toBeLessThan(16_384);
  expect(dbBytes() - before).toBeLessThan(2 * 2 ** 20);
  const h = await api(`/connections/${c.id}/history?from=${Date.now() - 60_000}&to=${Date.now() + 60_000}`);
  expect(h.body.queues_untracked).toBe(1);
  expect(h.body.queue_names).toEqual(['default']);
});

it('bounds a sample by count and bytes; process fields are cut on a character boundary', () => {
  const queues: Record<string, [number, number]> = {};
  for (let i = 0; i < 50; i++) queues[`q${i}`] = [i, 0];
  const m = metrics(queues, { processed: 0, failed: 0 });
  m.processes[0]!.hostname = 'é'.repeat(300);
  const byCount = boundSample(m, { maxNameBytes: 256, maxEntries: 10, maxBytes: 2 ** 20 });
  expect(Object.keys(byCount.metrics.queues)).toEqual(Array.from({ length: 10 }, (_, i) => `q${i}`));
  expect(byCount.queuesLeftOut).toBe(40);
  expect(Buffer.byteLength(byCount.metrics.processes[0]!.hostname)).toBeLessThanOrEqual(256);
  expect(byCount.metrics.processes[0]!.hostname).toMatch(/^é+…$/);
  const byBytes = boundSample(m, { maxNameBytes: 256, maxEntries: 1000, maxBytes: 20 * 34 });
  expect(Object.keys(byBytes.metrics.queues)).toHaveLength(19);
  expect(byBytes.queuesLeftOut).toBe(31);
  expect(byBytes.processesLeftOut).toBe(1);
  expect(cutBytes('日本語', 8)).toBe('日…');
});
