// A quiet Sidekiq process (TSTP) takes no new work: its threads are no spare capacity. Two real
// `sidekiq` processes, one quieted; the history's busy and concurrency count only the other.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { warmOracle } from '../helpers/sidekiq-oracle.ts';
import { startQuietPair } from '../helpers/quiet-sidekiq.ts';
import { monitor } from '../monitor/support.ts';
import type { ConnectionView, CurrentSample, History } from '../../contract/app.ts';

let s: TestServer;
let redis: TestRedis;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  warmOracle();
  redis = await startRedis();
  s = await startServer({ monitorIntervalMs: 3_600_000, mode: 'test', sidekiqTimeoutMs: 1500 });
}, 60_000);
afterAll(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await s?.close();
  await redis?.stop();
});

const api = (p: string, opts: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app${p}`, { token: s.adminToken, ...opts });
const last = (series: (number | null)[]) => series.filter((v) => v !== null).at(-1);

it('a quiet process is flagged quiet and its threads are left out of the history’s busy and concurrency', async () => {
  await startQuietPair(redis.url, workers);

  const r = await api('/connections', { json: { name: 'sidekiq', kind: 'sidekiq', redis_url: redis.url } });
  expect(r.status).toBe(201);
  const c = r.body as ConnectionView;
  await monitor(s).sampleNow(c.id);
  const cur = (await api(`/connections/${c.id}/current`)).body as CurrentSample;
  const quietAt = cur.processes.findIndex((p) => p.tag === 'to-quiet');
  const workingAt = cur.processes.findIndex((p) => p.tag === 'working');
  expect(cur.sidekiq!.process_details[quietAt]).toMatchObject({ quiet: true, stopping: false });
  expect(cur.sidekiq!.process_details[workingAt]).toMatchObject({ quiet: false, stopping: false });
  // GitLab's process list still says what each process is: the quiet one keeps its concurrency.
  expect(cur.processes[quietAt]!.concurrency).toBe(3);

  const h = (await api(`/connections/${c.id}/history?from=${Date.now() - 600_000}&to=${Date.now() + 60_000}`)).body as History;
  expect(last(h.totals.concurrency)).toBe(2);
  expect(last(h.totals.busy)).toBe(0);
  expect(last(h.totals.processes)).toBe(2);
}, 90_000);
