// The Busy view's route (GET /api/app/connections/:id/busy): a real Sidekiq 6.4's running jobs
// listed exactly as Sidekiq's own Sidekiq::Workers lists them, a quiet process's rows marked; a
// workers hash with garbage in it answers rows, not a 500; the embedded job system's running jobs,
// on SQLite and on Redis (--redis).
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby, sidekiqView, startSidekiqApp, warmOracle } from '../helpers/sidekiq-oracle.ts';
import { waitFor, waitUntil } from '../helpers/wait.ts';
import type { ConnectionView } from '../../contract/app.ts';
import type { BusyPage } from '../../contract/busy.ts';

let s: TestServer;
let redis: TestRedis;
const workers: ChildProcess[] = [];
const servers: TestServer[] = [];

beforeAll(async () => {
  warmOracle();
  redis = await startRedis();
  s = await startServer({ monitorIntervalMs: 3_600_000, mode: 'test', sidekiqTimeoutMs: 3000, jobConcurrency: 3 });
}, 60_000);
afterAll(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  for (const x of servers) await x.close();
  await s?.close();
  await redis?.stop();
});

const api = (srv: TestServer, p: string, opts: Parameters<typeof http>[1] = {}) => http(`${srv.url}/api/app${p}`, { token: srv.adminToken, ...opts });

async function sidekiqConnection(namespace?: string): Promise<string> {
  const r = await api(s, '/connections', { json: { name: `sidekiq ${namespace ?? ''}`, kind: 'sidekiq', redis_url: redis.url, ...(namespace ? { namespace } : {}) } });
  expect(r.status).toBe(201);
  return (r.body as ConnectionView).id;
}

it("lists a real Sidekiq's running jobs as Sidekiq::Workers does, a quiet process's marked", async () => {
  const a = startSidekiqApp(redis.url, ['-q', 'slow_a', '-c', '3', '-g', 'to-quiet']);
  const b = startSidekiqApp(redis.url, ['-q', 'slow_b', '-c', '2', '-g', 'working']);
  workers.push(a, b);
  await sidekiqRuby(
    redis.url,
    `3.times { |i| Sidekiq::Client.push("class" => "SleepJob", "queue" => "slow_a", "args" => [120 + i]) }
     2.times { |i| Sidekiq::Client.push("class" => "SleepJob", "queue" => "slow_b", "args" => ["#{130 + i}.5"]) }`,
  );
  await waitFor('five jobs running', async () => ((await sidekiqView(redis.url)).workers.length === 5 ? true : undefined), 60_000, 100);
  a.kill('SIGTSTP');
  const view = await waitUntil('the process to report quiet', () => sidekiqView(redis.url), (v) => v.processes.some((p) => p.tag === 'to-quiet' && p.quiet), 30_000, 100);
  const quietIdentity = view.processes.find((p) => p.tag === 'to-quiet')!.identity;

  const id = await sidekiqConnection();
  const r = await api(s, `/connections/${id}/busy`);
  expect(r.status).toBe(200);
  const page = r.body as BusyPage;
  const key = (w: { process: string; thread: string }) => `${w.process} ${w.thread}`;
  const ours = page.jobs.map((j) => ({ process: j.process, thread: j.thread, queue: j.queue, jid: j.jid, class: j.class, run_at: Date.parse(j.run_at!) / 1000, args: JSON.parse(j.args) as unknown })).sort((x, y) => key(x).localeCompare(key(y)));
  const theirs = view.workers.map((w) => ({ process: w.process, thread: w.thread, queue: w.queue, jid: w.jid, class: w.class, run_at: w.run_at, args: w.args })).sort((x, y) => key(x).localeCompare(key(y)));
  expect(ours).toEqual(theirs);
  expect(page.total).toBe(5);
  expect(page.processes_read).toBe(2);
  expect(page.jobs.filter((j) => j.quiet).map((j) => j.process)).toEqual([quietIdentity, quietIdentity, quietIdentity]);
  for (const j of page.jobs) expect(j.running_for_s).toBeGreaterThanOrEqual(0);
  // Oldest start first, as Sidekiq::Workers#each sorts.
  const starts = page.jobs.map((j) => Date.parse(j.run_at!));
  expect(starts).toEqual([...starts].sort((x, y) => x - y));
}, 120_000);

it('a workers hash with garbage in it answers the rows with what parsed, never a 500', async () => {
  const ns = 'junk';
  const now = Math.floor(Date.now() / 1000);
  const good = JSON.stringify({ queue: 'q', payload: JSON.stringify({ class: 'GoodJob', args: [1, 'x'.repeat(300)], jid: 'abc123', queue: 'q' }), run_at: now - 30 });
  await sidekiqRuby(
    redis.url,
    `Sidekiq.redis do |c|
       c.sadd("${ns}:processes", ["h:1:aa", "h:2:bb", "h:3:gone"])
       c.hset("${ns}:h:1:aa", "beat", "${now}", "quiet", "stopping")
       c.hset("${ns}:h:1:aa:workers", "t1", "not json at all", "t2", '{"queue":"q","payload":"{broken","run_at":"soon"}', "t3", ${JSON.stringify(good)}, "t4", "[1,2]")
       c.hset("${ns}:h:2:bb", "beat", "${now}")
       c.set("${ns}:h:2:bb:workers", "a string, not a hash")
     end`,
  );
  const id = await sidekiqConnection(ns);
  const r = await api(s, `/connections/${id}/busy`);
  expect(r.status).toBe(200);
  const page = r.body as BusyPage;
  // h:3:gone has no process hash: dead, skipped as Sidekiq skips it.
  expect(page.processes_read).toBe(2);
  expect(page.processes_total).toBe(3);
  const byThread = Object.fromEntries(page.jobs.map((j) => [j.thread, j]));
  expect(Object.keys(byThread).sort()).toEqual(['t1', 't2', 't3', 't4']);
  expect(byThread.t1).toMatchObject({ class: '?', unreadable: true, run_at: null, process: 'h:1:aa', quiet: true, stopping: true });
  expect(byThread.t2).toMatchObject({ class: '?', queue: 'q', unreadable: true, run_at: null });
  expect(byThread.t4).toMatchObject({ unreadable: true });
  expect(byThread.t3).toMatchObject({ class: 'GoodJob', jid: 'abc123', queue: 'q', unreadable: false, args_truncated: true, run_at: new Date((now - 30) * 1000).toISOString() });
  expect(JSON.parse(byThread.t3!.args_full!)).toEqual([1, 'x'.repeat(300)]);
  expect(byThread.t3!.running_for_s).toBeGreaterThanOrEqual(30);
}, 60_000);

async function embeddedBusy(srv: TestServer): Promise<BusyPage> {
  const r = await http(`${srv.url}/api/v3/sim/jobs`, { token: srv.adminToken, json: { queue: 'slow', count: 5, class: 'SlowReport', duration_ms: 120_000 } });
  expect(r.status).toBe(202);
  return waitUntil('three slow jobs running', async () => (await api(srv, '/connections/embedded/busy')).body as BusyPage, (p) => p.total === 3, 30_000, 50);
}

it("lists the embedded job system's running jobs on SQLite", async () => {
  const page = await embeddedBusy(s);
  expect(page.jobs).toHaveLength(3);
  for (const j of page.jobs) {
    expect(j).toMatchObject({ class: 'SlowReport', queue: 'slow', quiet: false, unreadable: false });
    expect(JSON.parse(j.args)).toMatchObject({ duration_ms: 120_000 });
    expect(j.running_for_s).toBeGreaterThanOrEqual(0);
  }
  expect(new Set(page.jobs.map((j) => j.thread)).size).toBe(3);
  expect((await api(s, '/connections/embedded/busy?limit=2')).body).toMatchObject({ total: 3, jobs: [{}, {}] });
}, 60_000);

it("lists the embedded job system's running jobs on Redis (--redis), jids included", async () => {
  const r = await startServer({ mode: 'test', jobConcurrency: 3, redisUrl: redis.url.replace(/\/\d+$/, '/3') });
  servers.push(r);
  const page = await embeddedBusy(r);
  for (const j of page.jobs) expect(j).toMatchObject({ class: 'SlowReport', queue: 'slow', unreadable: false, jid: expect.stringMatching(/^[0-9a-f]{24}$/) });
}, 60_000);
