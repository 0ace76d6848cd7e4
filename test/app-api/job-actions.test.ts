// The action routes on this server's own job system (the "embedded" connection): the same routes
// as a watched Sidekiq's, handed on to the job system's retry and dead set actions, on SQLite, on
// PostgreSQL and on Redis (`--redis`); what it has no such action for is a 400 saying what to do.
// "allow changes" is stored with the connection on both stores and kept across a restart.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, type TestServer } from '../helpers/server.ts';
import { eachBackend } from '../api/backends.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { useRedis } from '../helpers/redis.ts';
import { useServers } from '../helpers/server-set.ts';
import { sidekiqRuby, warmOracle } from '../helpers/sidekiq-oracle.ts';
import { onRedis, postJobs } from '../jobs/lib.ts';
import type { ConnectionView } from '../../contract/app.ts';
import type { ActionDone } from '../../contract/job-actions.ts';

type Failed = { key: string; id: number; queue: string };
const QUIET = { stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0 };

const app = (s: TestServer, p: string, method = 'GET', json?: unknown) => http(`${s.url}/api/app${p}`, { method, json, token: s.adminToken });
const sim = (s: TestServer, p: string) => http(`${s.url}/api/v3/sim${p}`, { token: s.adminToken });
const listed = async (s: TestServer, set: 'retries' | 'dead', queue: string) => ((await sim(s, `/jobs/${set}?per_page=1000`)).body as Failed[]).filter((j) => j.queue === queue);

async function failInto(s: TestServer, set: 'retries' | 'dead', queue: string, n: number): Promise<Failed[]> {
  await postJobs(s.url, s.adminToken, { queue, class: set === 'dead' ? 'DoomedWorker' : 'FlakyWorker', count: n, fail: true, retry: set === 'dead' ? 0 : 5 });
  return waitFor(`${n} in ${set}`, async () => {
    const mine = await listed(s, set, queue);
    return mine.length === n ? mine : undefined;
  });
}

/** The embedded job system through the action routes: retry, delete and kill one, retry, delete and kill all; what it lacks is a 400. */
async function actOnEmbedded(s: TestServer): Promise<void> {
  const retries = await failInto(s, 'retries', 'flaky', 2);
  const killed = await failInto(s, 'retries', 'killed', 2);
  const dead = await failInto(s, 'dead', 'doomed', 3);
  const enc = encodeURIComponent;

  const retried = await app(s, `/connections/embedded/jobs/sets/retry/${enc(retries[0]!.key)}/retry`, 'POST');
  expect(retried.status).toBe(200);
  expect((retried.body as ActionDone).count).toBe(1);
  await waitFor('the retried entry gone from the retry set', async () => ((await listed(s, 'retries', 'flaky')).some((j) => j.key === retries[0]!.key) ? undefined : true));
  expect((await app(s, `/connections/embedded/jobs/sets/retry/${enc(retries[1]!.key)}`, 'DELETE')).status).toBe(200);
  expect((await app(s, `/connections/embedded/jobs/sets/retry/${enc(retries[1]!.key)}`, 'DELETE')).status).toBe(404);

  expect((await app(s, `/connections/embedded/jobs/sets/dead/${enc(dead[0]!.key)}`, 'DELETE')).status).toBe(200);
  const all = await app(s, '/connections/embedded/jobs/sets/dead/all/retry', 'POST');
  expect(all.body).toMatchObject({ count: 2 });
  await waitFor('the dead retried and dead again', async () => ((await listed(s, 'dead', 'doomed')).length === 2 ? true : undefined));
  const cleared = await app(s, '/connections/embedded/jobs/sets/dead', 'DELETE');
  expect(cleared.body).toMatchObject({ count: 2, left: 0 });
  expect(await listed(s, 'dead', 'doomed')).toEqual([]);

  // Kill: a retry entry into the dead set now; then all of them.
  expect((await app(s, `/connections/embedded/jobs/sets/retry/${enc(killed[0]!.key)}/kill`, 'POST')).status).toBe(200);
  expect((await app(s, `/connections/embedded/jobs/sets/retry/${enc(killed[0]!.key)}/kill`, 'POST')).status).toBe(404);
  expect((await listed(s, 'dead', 'killed')).map((j) => j.id)).toEqual([killed[0]!.id]);
  expect((await app(s, '/connections/embedded/jobs/sets/retry/all/kill', 'POST')).body).toMatchObject({ left: 0 });
  expect((await listed(s, 'dead', 'killed')).map((j) => j.id).sort()).toEqual(killed.map((j) => j.id).sort());
  expect(await listed(s, 'retries', 'killed')).toEqual([]);
  expect((await app(s, `/connections/embedded/jobs/sets/dead/${enc(dead[1]!.key)}/kill`, 'POST')).status).toBe(409);

  for (const [p, method, says] of [
    ['/connections/embedded/jobs/sets/schedule/all/retry', 'POST', /no scheduled set/],
    ['/connections/embedded/processes/me:1:x/quiet', 'POST', /stop with the server/],
    ['/connections/embedded/jobs/queues/flaky/abc', 'DELETE', /clear the queue instead/],
  ] as const) {
    const r = await app(s, p, method);
    expect(r.status, p).toBe(400);
    expect((r.body as { message: string }).message, p).toMatch(says);
  }
  expect((await app(s, '/connections/embedded/jobs/queues/stuck_builds', 'DELETE')).status).toBe(409);
  expect((await app(s, '/connections/embedded', 'PATCH', { allow_changes: false })).status).toBe(400);
}

eachBackend((startServer, backend) => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  it(`acts on the embedded job system through the same routes (${backend})`, async () => {
    const s = await startServer(QUIET);
    servers.push(s);
    await actOnEmbedded(s);
  }, 60_000);

  it(`keeps a sidekiq connection's allow_changes across a restart, off by default, off again when it moves to another Redis (${backend})`, async () => {
    const dataDir = tempDir();
    let s = await startServer({ ...QUIET, dataDir, monitorIntervalMs: 3_600_000 });
    servers.push(s);
    const made = (await app(s, '/connections', 'POST', { name: 'orders', kind: 'sidekiq', redis_url: 'redis://127.0.0.1:1/0' })).body as ConnectionView;
    expect(made.allow_changes).toBe(false);
    expect((await app(s, `/connections/${made.id}`, 'PATCH', { allow_changes: true })).body).toMatchObject({ allow_changes: true });
    await s.close({ keepData: true });
    servers.splice(0);
    s = await startServer({ ...QUIET, dataDir, monitorIntervalMs: 3_600_000 });
    servers.push(s);
    const again = ((await app(s, '/connections')).body as ConnectionView[]).find((c) => c.id === made.id)!;
    expect(again.allow_changes).toBe(true);
    const moved = await app(s, `/connections/${made.id}`, 'PATCH', { redis_url: 'redis://127.0.0.1:2/0' });
    expect(moved.body).toMatchObject({ allow_changes: false });
  }, 60_000);
});

describe('serve --redis', () => {
  const redis = useRedis();
  beforeAll(warmOracle);
  const servers = useServers(() => ({ ...onRedis(redis.url), ...QUIET }));
  afterEach(async () => {
    await servers.closeAll();
    await sidekiqRuby(redis.url, 'Sidekiq.redis { |c| c.flushdb }');
  });

  it('acts on the job system in Redis through the same routes; Sidekiq’s API sees the killed jobs dead', async () => {
    await actOnEmbedded(await servers.start());
    expect(await sidekiqRuby(redis.url, 'puts Sidekiq::DeadSet.new.count { |j| j.queue == "killed" }')).toBe('2\n');
  }, 60_000);
});
