// `serve --redis` with what a Sidekiq app may leave in a shared Redis, checked against Sidekiq 6.4
// (Debian's ruby-sidekiq, through its own API in the oracle): a job of a class no one here knows
// fails as Sidekiq's Processor fails it (NameError through the retry path); a payload that is not
// JSON goes to the dead set as Sidekiq's does; args nested 20,000 levels are shown as their text
// on every page and still reach the retry and dead sets; retry and dead entries are named
// `<score>-<jid>` as Sidekiq Web names them, so deleting one removes exactly that one.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers/redis.ts';
import { sidekiqRuby, startSidekiqApp, warmOracle } from '../helpers/sidekiq-oracle.ts';
import type { TestServer } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { http } from '../helpers/http.ts';
import { onRedis, postJobs, retryNowThenDue } from './lib.ts';
import { waitFor } from '../helpers/wait.ts';

const redis = useRedis();
beforeAll(() => warmOracle());

const servers = useServers(() => onRedis(redis.url));
const start = servers.start;
afterEach(async () => {
  await servers.closeAll();
  await redis.client.flushdb();
});

type Failed = { key: string; id: number; class: string; queue: string; args: unknown; args_raw: string | null; unreadable: boolean; error_class: string | null; error_message: string | null; retry_count: number };
const sim = (s: TestServer, p: string, init: { method?: string; json?: unknown } = {}) => http(`${s.url}/api/v3/sim${p}`, { ...init, token: s.adminToken });
const list = async (s: TestServer, set: 'retries' | 'dead') => {
  const r = await sim(s, `/jobs/${set}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as Failed[];
};
/** A queue Jobscope serves (it created it): a job pushed there by an app is taken by Jobscope. */
const served = async (s: TestServer, queue: string) => {
  await postJobs(s.url, s.adminToken, { queue, count: 1 });
  await waitFor(`${queue} drained`, async () => (await redis.client.llen(`queue:${queue}`)) === 0 && (await redis.client.get('stat:processed')) !== null, 10_000, 50);
};
const workingLists = async () => {
  const keys = await redis.client.keys('working:*');
  return (await Promise.all(keys.map((k) => redis.client.lrange(k, 0, -1)))).flat();
};
const payload = (fields: Record<string, unknown>) => JSON.stringify({ retry: true, created_at: Date.now() / 1000, enqueued_at: Date.now() / 1000, ...fields });

describe('serve --redis: what a Sidekiq app may leave in Redis', () => {
  it('a job of a class no one knows fails as a real Sidekiq 6.4 fails it: NameError into the retry set with its args, counted, then dead', async () => {
    const push = (queue: string) => sidekiqRuby(redis.url, `Sidekiq::Client.push("class" => "NoSuchJob", "queue" => "${queue}", "args" => [1, "two", {"three" => 3}], "retry" => 1)`);
    const firstRetry = () => waitFor('NoSuchJob in Sidekiq’s RetrySet', async () => {
      const out = await sidekiqRuby(redis.url, 'e = Sidekiq::RetrySet.new.first; puts(e ? JSON.generate(e.item) : "")');
      return out.trim() ? (JSON.parse(out) as Record<string, unknown>) : undefined;
    }, 30_000, 50);
    const stats = async () => (await redis.client.mget('stat:processed', 'stat:failed')).map(Number);

    // The reference: a real `sidekiq` (the fixture app, which has no NoSuchJob) runs it first.
    const sidekiq = startSidekiqApp(redis.url, ['-q', 'reference', '-c', '1']);
    let theirs: Record<string, unknown>;
    try {
      await push('reference');
      theirs = await firstRetry();
      // Sidekiq adds its counters with its next heartbeat.
      await waitFor('Sidekiq’s counters', async () => (await stats()).join() === '1,1', 30_000, 50);
    } finally {
      const exited = new Promise((r) => sidekiq.once('exit', r));
      sidekiq.kill('SIGKILL');
      await exited;
    }
    await redis.client.flushdb();

    const s = await start();
    await served(s, 'apps');
    const [processed] = await stats();
    await push('apps');
    const mine = await firstRetry();
    // Ruby 3.1 appends a source excerpt after a blank line; the first line is the constant's.
    const firstLine = (m: unknown) => String(m).split('\n')[0];
    expect(mine).toMatchObject({ class: 'NoSuchJob', queue: 'apps', args: [1, 'two', { three: 3 }], retry: 1, error_class: theirs.error_class, retry_count: theirs.retry_count });
    expect(firstLine(mine.error_message)).toBe(firstLine(theirs.error_message));
    expect(firstLine(mine.error_message)).toBe('uninitialized constant NoSuchJob');
    expect(Object.keys(mine).sort()).toEqual(Object.keys(theirs).sort());
    expect(await stats()).toEqual([processed! + 1, 1]);
    expect(await workingLists()).toEqual([]);

    // Retried by hand it fails and keeps Sidekiq's count 0; its last retry, come due, fails the same way: dead, with retry_count 1.
    const [entry] = await list(s, 'retries');
    await retryNowThenDue(redis.url, async () => {
      expect((await sim(s, '/jobs/retries/retry', { method: 'POST', json: { ids: [entry!.key] } })).body).toEqual({ count: 1, missing: [] });
    }, 0);
    const dead = await waitFor('NoSuchJob in Sidekiq’s DeadSet', async () => {
      const out = await sidekiqRuby(redis.url, 'e = Sidekiq::DeadSet.new.first; puts(e ? JSON.generate(e.item) : "")');
      return out.trim() ? (JSON.parse(out) as Record<string, unknown>) : undefined;
    }, 10_000, 50);
    expect(dead).toMatchObject({ class: 'NoSuchJob', args: [1, 'two', { three: 3 }], retry_count: 1, error_class: 'NameError', error_message: 'uninitialized constant NoSuchJob' });
    expect(await redis.client.get('stat:failed')).toBe('3'); // the first run, the one retried by hand, the last retry
  }, 60_000);

  it('a payload that is not JSON goes to the dead set (Sidekiq’s DeadSet sees it), logged once; listed, deleted, never retried', async () => {
    const s = await start({ logLevel: 'warn' });
    await served(s, 'apps');
    await redis.client.lpush('queue:apps', '{not json');
    const dead = await waitFor('the payload in Sidekiq’s DeadSet', async () => {
      const out = JSON.parse(await sidekiqRuby(redis.url, 'puts JSON.generate(Sidekiq::DeadSet.new.map(&:value))')) as string[];
      return out.length > 0 ? out : undefined;
    }, 10_000, 50);
    expect(dead).toEqual(['{not json']);
    expect(await workingLists()).toEqual([]);
    expect(await redis.client.llen('queue:apps')).toBe(0);
    // As Sidekiq: no counter for it.
    expect(await redis.client.get('stat:failed')).toBeNull();

    const logs = path.join(s.dataDir, 'logs');
    const logged = await waitFor('the log line', async () => {
      const lines = fs.readdirSync(logs).flatMap((f) => fs.readFileSync(path.join(logs, f), 'utf8').split('\n')).filter((l) => l.includes('Invalid JSON for job'));
      return lines.length > 0 ? lines : undefined;
    }, 5000, 50);
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0]!)).toMatchObject({ context: 'Invalid JSON for job', jobstr: '{not json' });

    const [entry] = await list(s, 'dead');
    expect(entry).toMatchObject({ class: '?', unreadable: true, args_raw: '{not json' });
    const retried = await sim(s, '/jobs/dead/retry', { method: 'POST', json: { ids: [entry!.key] } });
    expect(retried.status).toBe(409);
    expect(retried.body.message).toContain('delete it');
    expect((await sim(s, '/jobs/dead/retry', { method: 'POST', json: {} })).body).toEqual({ count: 0 });
    expect(await redis.client.llen('queue:apps')).toBe(0);
    expect((await sim(s, '/jobs/dead/delete', { method: 'POST', json: { ids: [entry!.key] } })).body).toEqual({ count: 1, missing: [] });
    expect(await redis.client.zcard('dead')).toBe(0);
  }, 60_000);

  it('args nested 20,000 levels: every page answers 200 with their text; a failing job reaches the retry set, then the dead set', async () => {
    const s = await start();
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const argsText = `[{"fail":true,"deep":${deep}}]`;
    const raw = (jid: string, queue: string) => `{"class":"SyntheticJob","queue":"${queue}","jid":"${jid}","retry":1,"created_at":${Date.now() / 1000},"enqueued_at":${Date.now() / 1000},"args":${argsText}}`;
    // Waiting in a queue no one serves: the queue page, and a connection's peek of it.
    await redis.client.sadd('queues', 'parked');
    await redis.client.lpush('queue:parked', raw('0123456789abcdef01234567', 'parked'));
    const page = await sim(s, '/jobs/queues/parked/jobs');
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body).toMatchObject([{ class: 'SyntheticJob', args: {}, args_raw: argsText }]);
    const conn = await http(`${s.url}/api/app/connections`, { json: { name: 'same redis', kind: 'sidekiq', redis_url: redis.url }, token: s.adminToken });
    expect(conn.status, JSON.stringify(conn.body)).toBe(201);
    const peek = (p: string) => http(`${s.url}/api/app/connections/${(conn.body as { id: string }).id}/sidekiq/${p}`, { token: s.adminToken });
    // Its first sample read first: a peek racing the connection's first connect can find that client closed under it.
    await waitFor('the connection sampled', async () => (await http(`${s.url}/api/app/connections/${(conn.body as { id: string }).id}/current`, { token: s.adminToken })).status === 200, 10_000, 50);
    const pq = await peek('queues/parked');
    expect(pq.status, JSON.stringify(pq.body)).toBe(200);
    expect((pq.body as { jobs: { args: string; args_truncated: boolean }[] }).jobs[0]).toMatchObject({ class: 'SyntheticJob', args: `${argsText.slice(0, 200)}…`, args_truncated: true });

    // Pushed where Jobscope works: it fails, and its payload (args byte for byte) reaches the retry set.
    await served(s, 'apps');
    await redis.client.lpush('queue:apps', raw('fedcba9876543210fedcba98', 'apps'));
    const [retry] = await waitFor('the deep job in the retry set', async () => ((await redis.client.zcard('retry')) === 1 ? list(s, 'retries') : undefined), 10_000, 50);
    expect(retry).toMatchObject({ class: 'SyntheticJob', args: {}, args_raw: argsText, error_class: 'Error' });
    const [member] = await redis.client.zrange('retry', '0', '0');
    expect(member).toContain(`"args":${argsText}`);
    expect(await workingLists()).toEqual([]);
    expect((await peek('sets/retry')).status).toBe(200);

    await retryNowThenDue(redis.url, async () => {
      expect((await sim(s, '/jobs/retries/retry', { method: 'POST', json: { ids: [retry!.key] } })).body).toEqual({ count: 1, missing: [] });
    }, 0);
    const [dead] = await waitFor('the deep job in the dead set', async () => ((await redis.client.zcard('dead')) === 1 ? list(s, 'dead') : undefined), 10_000, 50);
    expect(dead).toMatchObject({ class: 'SyntheticJob', args_raw: argsText, retry_count: 1 });
    expect(await workingLists()).toEqual([]);
    const pd = await peek('sets/dead');
    expect(pd.status).toBe(200);
    expect((pd.body as { jobs: { args: string }[] }).jobs[0]!.args).toBe(`${argsText.slice(0, 200)}…`);

    // Running: the heartbeat's workers hash (Sidekiq's Busy data) holds its payload as fetched, and the pages still answer.
    const running = raw('00000000000000000000beef', 'apps').replace('"fail":true', '"duration_ms":60000');
    await redis.client.lpush('queue:apps', running);
    const busy = await waitFor('the deep job in the workers hash', async () => {
      const keys = await redis.client.keys('*:workers');
      const entries = (await Promise.all(keys.map((k) => redis.client.hvals(k)))).flat().map((v) => JSON.parse(v) as { queue: string; payload: string });
      return entries.find((e) => e.payload.includes('beef'));
    }, 10_000, 50);
    expect(busy).toMatchObject({ queue: 'apps', payload: running });
    for (const p of ['/jobs/queues', '/jobs/queues/apps', '/jobs/retries', '/jobs/dead']) expect((await sim(s, p)).status, p).toBe(200);
    expect((await http(`${s.url}/api/v4/sidekiq/compound_metrics`, { token: s.adminToken })).status).toBe(200);
  }, 60_000);

  it('entries are named <score>-<jid> as Sidekiq Web names them: jids sharing 12 hex chars, any jid string, one jid at two scores', async () => {
    const s = await start();
    const at = Math.floor(Date.now() / 1000) + 3600;
    const failed = { class: 'SyntheticJob', queue: 'parked', error_class: 'RuntimeError', error_message: 'boom', failed_at: at - 3600, retry_count: 0 };
    const a = 'abcdef012345000000000001';
    const b = 'abcdef012345000000000002';
    await redis.client.zadd('retry', String(at), payload({ ...failed, jid: a, args: ['a'] }), String(at + 1), payload({ ...failed, jid: b, args: ['b'] }));
    await redis.client.zadd('retry', String(at + 2.25), payload({ ...failed, jid: 'order-1001', args: ['order'] }));
    await redis.client.zadd('retry', String(at + 3), payload({ ...failed, jid: 'twice', args: [1] }), String(at + 4), payload({ ...failed, jid: 'twice', args: [2] }));
    const entries = await list(s, 'retries');
    expect(entries.map((e) => e.key)).toEqual([`${at}.0-${a}`, `${at + 1}.0-${b}`, `${at + 2.25}-order-1001`, `${at + 3}.0-twice`, `${at + 4}.0-twice`]);
    // The keys are Sidekiq Web's own (its helpers' job_params: "#{score}-#{jid}", the score a Float).
    const theirs = JSON.parse(await sidekiqRuby(redis.url, 'puts JSON.generate(Sidekiq::RetrySet.new.map { |e| "#{e.score}-#{e.item["jid"]}" })')) as string[];
    expect(entries.map((e) => e.key)).toEqual([...theirs].reverse()); // Sidekiq's RetrySet#each runs latest first

    // a and b share the old numeric id: by id it is refused (it names two), by key exactly one goes.
    expect(entries[0]!.id).toBe(entries[1]!.id);
    const byId = await sim(s, '/jobs/retries/delete', { method: 'POST', json: { ids: [entries[0]!.id] } });
    expect(byId.status).toBe(400);
    expect(byId.body.message).toContain('names 2 entries');
    expect((await sim(s, '/jobs/retries/delete', { method: 'POST', json: { ids: [entries[0]!.key] } })).body).toEqual({ count: 1, missing: [] });
    expect(JSON.parse(await sidekiqRuby(redis.url, 'puts JSON.generate(Sidekiq::RetrySet.new.map(&:jid).reverse)'))).toEqual([b, 'order-1001', 'twice', 'twice']);
    // Gone already: missing, and a 404 when it was the only one.
    expect((await sim(s, '/jobs/retries/delete', { method: 'POST', json: { ids: [entries[0]!.key] } })).status).toBe(404);

    // One jid at two scores: two entries; the second's key names only it.
    expect((await sim(s, '/jobs/retries/delete', { method: 'POST', json: { ids: [entries[4]!.key, 'not-a-key'] } })).status).toBe(400);
    expect((await sim(s, '/jobs/retries/delete', { method: 'POST', json: { ids: [entries[4]!.key, `${at + 9}.0-twice`] } })).body).toEqual({ count: 1, missing: [`${at + 9}.0-twice`] });
    expect((await list(s, 'retries')).map((e) => e.args)).toEqual([{}, {}, {}]); // positional args: not an object (shown in the payload)
    expect((await redis.client.zrange('retry', '0', '-1')).map((m) => (JSON.parse(m) as { args: unknown[] }).args)).toEqual([['b'], ['order'], [1]]);

    // A jid that is no hex: retried now into its queue, then deleted from the dead set by its key.
    expect((await sim(s, '/jobs/retries/retry', { method: 'POST', json: { ids: [entries[2]!.key] } })).body).toEqual({ count: 1, missing: [] });
    expect(await redis.client.lrange('queue:parked', 0, -1)).toHaveLength(1);
    await redis.client.zadd('dead', String(at), payload({ ...failed, jid: 'order-1001', args: ['x'] }), String(at + 1), payload({ ...failed, jid: 'order-1001', args: ['y'] }));
    const dead = await list(s, 'dead');
    expect(dead.map((e) => e.key)).toEqual([`${at + 1}.0-order-1001`, `${at}.0-order-1001`]);
    expect((await sim(s, '/jobs/dead/delete', { method: 'POST', json: { ids: [dead[1]!.key] } })).body).toEqual({ count: 1, missing: [] });
    expect((await sim(s, '/jobs/dead/retry', { method: 'POST', json: { ids: [dead[0]!.key] } })).body).toEqual({ count: 1 });
    expect(await redis.client.zcard('dead')).toBe(0);
    expect(await redis.client.llen('queue:parked')).toBe(2);
  }, 60_000);

  it('a dead entry answers its death (the score), its first failure (failed_at) and its last (retried_at) apart', async () => {
    const s = await start();
    const died = Math.floor(Date.now() / 1000) - 60;
    await redis.client.zadd('dead', String(died), payload({ class: 'SyntheticJob', queue: 'parked', jid: 'gone', args: [], error_class: 'RuntimeError', error_message: 'boom', failed_at: died - 86400, retried_at: died - 1, retry_count: 25 }));
    const [dead] = (await list(s, 'dead')) as (Failed & { failed_at: string | null; first_failed_at: string | null })[];
    expect(dead!.key).toBe(`${died}.0-gone`);
    expect(dead!.first_failed_at).toBe(new Date((died - 86400) * 1000).toISOString());
    expect(dead!.failed_at).toBe(new Date((died - 1) * 1000).toISOString());
  }, 60_000);
});
