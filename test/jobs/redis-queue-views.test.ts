// `serve --redis`: the control API's queue views (the queue list, a queue's page and its next jobs,
// the backlog in POST /jobs' answer, queue deletion) read Redis, checked against Sidekiq's own API
// (Ruby, Debian's ruby-sidekiq 6.4) on a real redis-server: jobs pushed through Jobscope's API, by
// Sidekiq::Client and by a Sidekiq app's queue that a real `sidekiq` process serves.
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby, sidekiqView, startSidekiqApp, warmOracle } from '../helpers/sidekiq-oracle.ts';
import type { TestServer } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { http } from '../helpers/http.ts';
import { idOfJid } from '../../server/store/redis/job-backend.ts';
import { onRedis, postJobs } from './lib.ts';
import { waitFor } from '../helpers/wait.ts';

let redis: TestRedis;
beforeAll(async () => {
  warmOracle();
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const servers = useServers(() => onRedis(redis.url));
const start = servers.start;
let app: ChildProcess | null = null;
afterEach(async () => {
  if (app && app.exitCode === null) {
    app.kill('SIGCONT');
    app.kill('SIGKILL');
  }
  app = null;
  await servers.closeAll();
  await sidekiqRuby(redis.url, 'Sidekiq.redis { |c| c.flushdb }');
});

type QueueView = { name: string; durable: boolean; backlog: number; latency: number; oldest_enqueued_at: string | null; processes: number; builtin: boolean };
type Queued = { id: number; queue: string; class: string; args: Record<string, unknown>; retry: number | boolean; enqueued_at: string };
const sim = (s: TestServer, p: string, method = 'GET') => http(`${s.url}/api/v3/sim${p}`, { method, token: s.adminToken });
const totals = (h: Headers) => ({ total: h.get('x-total'), pages: h.get('x-total-pages'), page: h.get('x-page'), per_page: h.get('x-per-page'), next: h.get('x-next-page'), prev: h.get('x-prev-page') });

type SidekiqQueue = { size: number; latency: number; jobs: { jid: string; class: string; args: unknown[]; enqueued_at: number }[] };

/** Sidekiq::Queue's own view: size, latency (Float) and the jobs as Queue#each yields them (the list's left end first). */
async function sidekiqQueue(name: string): Promise<SidekiqQueue> {
  const out = await sidekiqRuby(redis.url, `q = Sidekiq::Queue.new(${JSON.stringify(name)}); puts JSON.generate("size" => q.size, "latency" => q.latency, "jobs" => q.map(&:item))`);
  return JSON.parse(out) as SidekiqQueue;
}

/** A job that has waited `ageS` seconds, as Sidekiq's client writes one but RPUSHed: the oldest, it runs next. */
const oldJob = (queue: string, cls: string, ageS: number, arg: Record<string, unknown>) =>
  sidekiqRuby(
    redis.url,
    `t = Time.now.to_f - ${ageS}
     job = { "class" => ${JSON.stringify(cls)}, "args" => [JSON.parse(${JSON.stringify(JSON.stringify(arg))})], "queue" => ${JSON.stringify(queue)}, "jid" => SecureRandom.hex(12), "retry" => true, "created_at" => t, "enqueued_at" => t }
     Sidekiq.redis { |c| c.sadd("queues", ${JSON.stringify(queue)}); c.rpush("queue:${queue}", JSON.generate(job)) }`,
  );

/** Every page of a queue's next jobs, `perPage` at a time, with the first page's headers. */
async function allPages(s: TestServer, queue: string, perPage: number) {
  const first = await sim(s, `/jobs/queues/${queue}/jobs?per_page=${perPage}`);
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  const jobs = [...(first.body as Queued[])];
  for (let page = 2; page <= Number(first.headers.get('x-total-pages')); page++) jobs.push(...((await sim(s, `/jobs/queues/${queue}/jobs?per_page=${perPage}&page=${page}`)).body as Queued[]));
  return { headers: first.headers, jobs };
}

/** Jobscope's latency, read between t0 and t1 (epoch s), against the oldest job's enqueued_at: Sidekiq's latency.to_i at those moments. */
function expectLatency(latency: number, oldestS: number, t0: number, t1: number) {
  expect(latency).toBeGreaterThanOrEqual(Math.trunc(t0 - oldestS));
  expect(latency).toBeLessThanOrEqual(Math.trunc(t1 - oldestS));
}

describe('serve --redis: the control API’s queue views are Sidekiq’s', () => {
  it('a Jobscope queue: backlog in POST /jobs’ answer, size, latency and next jobs in the order they run, paged, as Sidekiq’s API says', async () => {
    const s = await start({ jobConcurrency: 1 });
    await postJobs(s.url, s.adminToken, { queue: 'blocker', duration_ms: 60_000 }); // the only slot is busy from now on
    await waitFor('the slot busy', async () => (await sidekiqView(redis.url)).processes[0]?.busy === 1, 15_000, 50);

    expect((await postJobs(s.url, s.adminToken, { queue: 'reports', class: 'ReportJob', count: 3, duration_ms: 5 })).backlog).toBe(3);
    await oldJob('reports', 'OldJob', 120, { n: 0 });
    await sidekiqRuby(redis.url, 'Sidekiq::Client.push_bulk("class" => "RubyJob", "queue" => "reports", "args" => [[{ "n" => 1 }], [{ "n" => 2 }]])');
    expect((await postJobs(s.url, s.adminToken, { queue: 'reports', class: 'LateJob', count: 1 })).backlog).toBe(7);

    const t0 = Date.now() / 1000;
    const one = (await sim(s, '/jobs/queues/reports')).body as QueueView;
    const list = (await sim(s, '/jobs/queues')).body as QueueView[];
    const t1 = Date.now() / 1000;
    const theirs = await sidekiqQueue('reports');
    const runOrder = [...theirs.jobs].reverse();
    const oldest = runOrder[0]!.enqueued_at;
    expect(theirs.size).toBe(7);
    expect(Math.trunc(theirs.latency)).toBeGreaterThanOrEqual(120);
    expect(one).toMatchObject({ name: 'reports', durable: true, builtin: false, backlog: theirs.size, processes: 1 });
    expectLatency(one.latency, oldest, t0, t1);
    expect(Math.abs(Date.parse(one.oldest_enqueued_at!) / 1000 - oldest)).toBeLessThan(0.002);
    // The list was read a moment after `one`: on a loaded machine a second may have turned between
    // the two reads (121 vs 122 was seen), so its latency is held to the same bounds, not to `one`'s.
    const inList = list.find((q) => q.name === 'reports')!;
    expect(inList).toMatchObject({ backlog: 7, oldest_enqueued_at: one.oldest_enqueued_at });
    expectLatency(inList.latency, oldest, t0, t1);
    expect(list.map((q) => q.name).sort()).toEqual((await sidekiqView(redis.url)).queues.map((q) => q.name).sort());

    const { headers, jobs } = await allPages(s, 'reports', 3);
    expect(totals(headers)).toEqual({ total: '7', pages: '3', page: '1', per_page: '3', next: '2', prev: '' });
    expect(jobs.map((j) => j.id)).toEqual(runOrder.map((j) => idOfJid(j.jid)));
    expect(jobs.map((j) => j.class)).toEqual(['OldJob', 'ReportJob', 'ReportJob', 'ReportJob', 'RubyJob', 'RubyJob', 'LateJob']);
    expect(jobs.map((j) => j.args)).toEqual([{ n: 0 }, { duration_ms: 5 }, { duration_ms: 5 }, { duration_ms: 5 }, { n: 1 }, { n: 2 }, { duration_ms: 0 }]);
    expect(jobs.map((j) => Date.parse(j.enqueued_at) / 1000)).toEqual(runOrder.map((j) => Math.trunc(j.enqueued_at * 1000) / 1000));
    expect(jobs[0]).toMatchObject({ queue: 'reports', retry: 25 });
    const last = await sim(s, '/jobs/queues/reports/jobs?per_page=3&page=3');
    expect(totals(last.headers)).toMatchObject({ page: '3', next: '', prev: '2' });
    expect((last.body as Queued[]).map((j) => j.class)).toEqual(['LateJob']);
    expect((await sim(s, '/jobs/queues/reports/jobs?per_page=3&page=9')).body).toEqual([]);
  }, 60_000);

  it('a queue only a real Sidekiq serves is listed with its size, latency and process; its jobs are paged as they will run; Jobscope takes none', async () => {
    const s = await start();
    app = startSidekiqApp(redis.url, ['-q', 'app-mail', '-c', '1', '-g', 'app']);
    await waitFor('the Sidekiq app listed', async () => (await sidekiqView(redis.url)).processes.some((p) => p.tag === 'app'), 30_000, 50);
    // Its one thread sleeps in a job from now on, so it fetches nothing more: the jobs below wait.
    await sidekiqRuby(redis.url, 'Sidekiq::Client.push("class" => "SleepJob", "queue" => "app-mail", "args" => [600])');
    await waitFor('the Sidekiq app running its SleepJob', async () => (await sidekiqQueue('app-mail')).size === 0, 30_000, 50);
    await oldJob('app-mail', 'NoopJob', 300, { n: 0 });
    await sidekiqRuby(redis.url, 'Sidekiq::Client.push_bulk("class" => "NoopJob", "queue" => "app-mail", "args" => (1..4).map { |i| [{ "n" => i }] })');

    const t0 = Date.now() / 1000;
    const list = (await sim(s, '/jobs/queues')).body as QueueView[];
    const one = await sim(s, '/jobs/queues/app-mail');
    const t1 = Date.now() / 1000;
    const all = await sidekiqView(redis.url);
    const theirs = await sidekiqQueue('app-mail');
    const runOrder = [...theirs.jobs].reverse();
    expect(list.map((q) => q.name).sort()).toEqual(all.queues.map((q) => q.name).sort());
    const mail = list.find((q) => q.name === 'app-mail')!;
    expect(mail).toMatchObject({ durable: true, builtin: false, backlog: 5, processes: 1 });
    expectLatency(mail.latency, runOrder[0]!.enqueued_at, t0, t1);
    expect(mail.latency).toBeGreaterThanOrEqual(300);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ name: 'app-mail', backlog: theirs.size, processes: 1 });

    const { headers, jobs } = await allPages(s, 'app-mail', 2);
    expect(totals(headers)).toMatchObject({ total: '5', pages: '3' });
    expect(jobs.map((j) => j.id)).toEqual(runOrder.map((j) => idOfJid(j.jid)));
    expect(jobs.map((j) => j.args)).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    expect(jobs.every((j) => j.class === 'NoopJob' && j.queue === 'app-mail')).toBe(true);
    // This server does not serve the app's queue: after a poll or two its jobs are all still there.
    await new Promise((r) => setTimeout(r, 300));
    expect((await sidekiqQueue('app-mail')).size).toBe(5);
  }, 90_000);

  it('deleting on Redis: a Jobscope queue goes with its waiting jobs; a Sidekiq app’s queue only when empty; built-in 409, unknown 404', async () => {
    const s = await start({ jobConcurrency: 1 });
    await postJobs(s.url, s.adminToken, { queue: 'doomed', count: 4, duration_ms: 60_000 });
    await waitFor('one running, three waiting', async () => (await sidekiqQueue('doomed')).size === 3, 15_000, 50);
    await sidekiqRuby(
      redis.url,
      `Sidekiq::Client.push_bulk("class" => "MailJob", "queue" => "app-mail", "args" => [[1], [2]])
       Sidekiq.redis { |c| c.sadd("queues", "app-idle") }`,
    );
    expect(((await sim(s, '/jobs/queues')).body as QueueView[]).map((q) => q.name)).toEqual(expect.arrayContaining(['doomed', 'app-mail', 'app-idle']));

    const gone = await sim(s, '/jobs/queues/doomed', 'DELETE');
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    expect(gone.body).toEqual({ name: 'doomed', dropped: 3 });
    expect((await sim(s, '/jobs/queues/doomed')).status).toBe(404);

    const refused = await sim(s, '/jobs/queues/app-mail', 'DELETE');
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/holds 2 jobs of a Sidekiq app/);
    expect((await sidekiqQueue('app-mail')).size).toBe(2);

    const idle = await sim(s, '/jobs/queues/app-idle', 'DELETE');
    expect(idle.status, JSON.stringify(idle.body)).toBe(200);
    expect(idle.body).toEqual({ name: 'app-idle', dropped: 0 });

    const builtin = await sim(s, '/jobs/queues/stuck_builds', 'DELETE');
    expect(builtin.status).toBe(409);
    expect(builtin.body.message).toMatch(/built-in/);
    const unknown = await sim(s, '/jobs/queues/nope', 'DELETE');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toMatch(/Queue Not Found/);
    for (const p of ['/jobs/queues/nope', '/jobs/queues/nope/jobs']) expect((await sim(s, p)).status, p).toBe(404);

    const names = (await sidekiqView(redis.url)).queues.map((q) => q.name);
    expect(names).not.toContain('doomed');
    expect(names).not.toContain('app-idle');
    expect(names).toEqual(expect.arrayContaining(['app-mail', 'stuck_builds']));
    expect(((await sim(s, '/jobs/queues')).body as QueueView[]).map((q) => q.name).sort()).toEqual([...names].sort());
  }, 60_000);
});
