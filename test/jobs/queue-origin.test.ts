// The queue views say whose a queue is (`origin`) and whether DELETE accepts it (`deletable`,
// `delete_refusal`), on both job backends: the embedded SQLite one (only Jobscope's queues) and
// `serve --redis` shared with a Sidekiq app (Debian's ruby-sidekiq 6.4 pushes through its own
// client into a real redis-server). Whatever the view says, DELETE then does: 200 where deletable,
// else 409 whose message is the view's reason word for word (after GitLab's "409 Conflict - ").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby } from '../helpers/sidekiq-oracle.ts';
import type { TestServer } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { http } from '../helpers/http.ts';
import { postJobs } from './lib.ts';
import { waitFor } from '../helpers/wait.ts';

type QueueView = { name: string; origin: 'jobscope' | 'sidekiq_app'; durable: boolean; builtin: boolean; backlog: number; deletable: boolean; delete_refusal: string | null };

const { start } = useServers({ stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0, jobPollMs: 50, monitorIntervalMs: 3_600_000 });

const sim = (s: TestServer, p: string, method = 'GET') => http(`${s.url}/api/v3/sim${p}`, { method, token: s.adminToken });
const list = async (s: TestServer) => new Map(((await sim(s, '/jobs/queues')).body as QueueView[]).map((q) => [q.name, q]));
const del = (s: TestServer, name: string) => sim(s, `/jobs/queues/${encodeURIComponent(name)}`, 'DELETE');
const verdict = (q: QueueView) => ({ origin: q.origin, deletable: q.deletable, delete_refusal: q.delete_refusal });

/** Every listed queue: its single view says the same, and DELETE does what the view said. */
async function deleteEachAsTheViewSays(s: TestServer, queues: Map<string, QueueView>) {
  for (const q of queues.values()) {
    expect(q.deletable, q.name).toBe(q.delete_refusal === null);
    const one = await sim(s, `/jobs/queues/${encodeURIComponent(q.name)}`);
    expect(verdict(one.body as QueueView), q.name).toEqual(verdict(q));
    const res = await del(s, q.name);
    if (q.deletable) expect(res.status, `${q.name}: ${JSON.stringify(res.body)}`).toBe(200);
    else expect({ status: res.status, message: (res.body as { message: string }).message }, q.name).toEqual({ status: 409, message: `409 Conflict - ${q.delete_refusal}` });
  }
}

describe('queue origin on the embedded SQLite job system', () => {
  it('every queue is Jobscope’s; synthetic ones are deletable, built-in and demo ones carry the 409’s reason', async () => {
    const s = await start({ jobConcurrency: 1 });
    await postJobs(s.url, s.adminToken, { queue: 'synth', count: 3, duration_ms: 600_000 });
    await waitFor('one of synth running', async () => (await list(s)).get('synth')?.backlog === 2, 15_000, 50);
    const load = await http(`${s.url}/api/v3/sim/load`, { method: 'PUT', json: { queues: 1, rate: 0, processes: 1, concurrency: 1 }, token: s.adminToken });
    expect(load.status).toBe(200);
    const demo = (load.body as { queues: string[] }).queues[0]!;

    const queues = await list(s);
    expect(new Set([...queues.values()].map((q) => q.origin))).toEqual(new Set(['jobscope']));
    expect(queues.get('synth')).toMatchObject({ origin: 'jobscope', builtin: false, backlog: 2, deletable: true, delete_refusal: null });
    expect(queues.get('stuck_builds')).toMatchObject({ origin: 'jobscope', builtin: true, deletable: false, delete_refusal: expect.stringMatching(/built-in/) });
    expect(queues.get(demo)).toMatchObject({ origin: 'jobscope', durable: false, deletable: false, delete_refusal: expect.stringMatching(/demo load/) });

    await deleteEachAsTheViewSays(s, queues);
    const after = await list(s);
    expect(after.has('synth')).toBe(false);
    expect(after.has('stuck_builds') && after.has(demo)).toBe(true);
  }, 60_000);

  it('/api/docs documents the fields', async () => {
    const s = await start();
    const doc = (await http(`${s.url}/api/docs/json`)).body as {
      paths: Record<string, { get: { responses: { 200: { content: { 'application/json': { schema: { items: { properties: Record<string, { description?: string; enum?: string[]; anyOf?: { enum?: string[]; const?: string }[] }> } } } } } } } }>;
    };
    const props = doc.paths['/api/v3/sim/jobs/queues']!.get.responses[200].content['application/json'].schema.items.properties;
    expect(props.origin?.description).toMatch(/sidekiq_app/);
    expect(JSON.stringify(props.origin)).toContain('"jobscope"');
    expect(JSON.stringify(props.origin)).toContain('"sidekiq_app"');
    expect(props.deletable?.description).toMatch(/DELETE/);
    expect(props.delete_refusal?.description).toMatch(/409/);
  });
});

describe('queue origin with serve --redis shared with a Sidekiq app', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('a Sidekiq app’s queue is sidekiq_app, deletable only while empty; Jobscope’s stay jobscope even when the app pushes to them', async () => {
    const s = await start({ redisUrl: redis.url, jobConcurrency: 1 });
    await postJobs(s.url, s.adminToken, { queue: 'ours', count: 3, duration_ms: 600_000 });
    await waitFor('one of ours running', async () => (await list(s)).get('ours')?.backlog === 2, 15_000, 100);
    await sidekiqRuby(
      redis.url,
      `Sidekiq::Client.push_bulk("class" => "MailJob", "queue" => "app-mail", "args" => [[1], [2]])
       Sidekiq::Client.push("class" => "MailJob", "queue" => "ours", "args" => [3])
       Sidekiq.redis { |c| c.sadd("queues", "app-idle") }`,
    );

    const queues = await list(s);
    expect(queues.get('ours')).toMatchObject({ origin: 'jobscope', backlog: 3, deletable: true, delete_refusal: null });
    expect(queues.get('app-mail')).toMatchObject({
      origin: 'sidekiq_app',
      backlog: 2,
      deletable: false,
      delete_refusal: 'queue "app-mail" holds 2 jobs of a Sidekiq app (Jobscope did not create it): Jobscope deletes such a queue only when it is empty; clear it in Sidekiq Web to drop its jobs',
    });
    expect(queues.get('app-idle')).toMatchObject({ origin: 'sidekiq_app', backlog: 0, deletable: true, delete_refusal: null });
    expect(queues.get('stuck_builds')).toMatchObject({ origin: 'jobscope', builtin: true, deletable: false });

    await deleteEachAsTheViewSays(s, queues);
    expect(Number(await sidekiqRuby(redis.url, 'print Sidekiq::Queue.new("app-mail").size'))).toBe(2);
    const after = await list(s);
    expect([...after.keys()].sort()).toEqual(['app-mail', ...[...queues.values()].filter((q) => q.builtin).map((q) => q.name)].sort());
  }, 60_000);

  it('the view follows the app: its queue becomes deletable once the app has taken its jobs', async () => {
    const s = await start({ redisUrl: redis.url });
    await sidekiqRuby(redis.url, 'Sidekiq::Client.push("class" => "MailJob", "queue" => "app-late", "args" => [1])');
    expect(verdict((await sim(s, '/jobs/queues/app-late')).body as QueueView)).toMatchObject({ origin: 'sidekiq_app', deletable: false });
    expect((await del(s, 'app-late')).status).toBe(409);
    // What a Sidekiq fetch does: the job leaves the list, the name stays in `queues`.
    await sidekiqRuby(redis.url, 'Sidekiq.redis { |c| c.rpop("queue:app-late") }');
    expect(verdict((await sim(s, '/jobs/queues/app-late')).body as QueueView)).toEqual({ origin: 'sidekiq_app', deletable: true, delete_refusal: null });
    expect((await del(s, 'app-late')).body).toEqual({ name: 'app-late', dropped: 0 });
  }, 60_000);
});
