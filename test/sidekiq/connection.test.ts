// A `sidekiq` connection against the real thing: Debian's redis-server, jobs pushed by Sidekiq's own
// client (Ruby), a real `sidekiq` process working one queue, and Sidekiq's own API (Ruby) as the
// oracle. Jobscope's `current` must say exactly what Sidekiq says.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, freePort, type TestRedis } from '../helpers/redis.ts';
import { sidekiqConfig, sidekiqRuby, sidekiqView, startSidekiqApp, warmOracle, type OracleView } from '../helpers/sidekiq-oracle.ts';
import { monitor } from '../monitor/support.ts';
import { waitFor } from '../helpers/wait.ts';
import type { ConnectionView, CurrentSample } from '../../contract/app.ts';
import type { PeekPage } from '../../contract/sidekiq.ts';

let s: TestServer;
let redis: TestRedis;
let worker: ChildProcess | null = null;

beforeAll(async () => {
  warmOracle();
  redis = await startRedis();
  s = await startServer({ monitorIntervalMs: 3_600_000, logLevel: 'debug', mode: 'test', sidekiqTimeoutMs: 1500 });
}, 60_000);
afterAll(async () => {
  if (worker && worker.exitCode === null) {
    worker.kill('SIGCONT');
    worker.kill('SIGKILL');
  }
  await s?.close();
  await redis?.stop();
});

const api = (p: string, opts: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app${p}`, { token: s.adminToken, ...opts });

async function addSidekiq(body: Record<string, unknown>): Promise<ConnectionView> {
  const r = await api('/connections', { json: { name: 'sidekiq', kind: 'sidekiq', ...body } });
  if (r.status !== 201) throw new Error(`add: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as ConnectionView;
}

async function current(id: string): Promise<CurrentSample> {
  await monitor(s).sampleNow(id);
  const r = await api(`/connections/${id}/current`);
  if (r.status !== 200) throw new Error(`current: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as CurrentSample;
}

/** What Jobscope must answer, derived from Sidekiq's own view (GitLab's endpoint, plus the extras). */
function expectSameAsSidekiq(ours: CurrentSample, oracle: OracleView, oursAtS: number): void {
  expect(Object.keys(ours.queues)).toEqual(oracle.queues.map((q) => q.name));
  for (const q of oracle.queues) {
    expect(ours.queues[q.name]!.backlog, q.name).toBe(q.size);
    // Latency grows with time: Sidekiq's float, moved to the moment Jobscope read, truncated as GitLab does.
    const expected = q.size === 0 ? 0 : Math.trunc(q.latency + (oursAtS - oracle.now));
    expect(Math.abs(ours.queues[q.name]!.latency - expected), q.name).toBeLessThanOrEqual(1);
  }
  expect(ours.processes).toEqual(
    oracle.processes.map((p) => ({
      hostname: p.hostname,
      pid: p.pid,
      tag: p.tag,
      started_at: p.started_at_gitlab,
      queues: p.queues,
      labels: p.labels,
      concurrency: p.concurrency,
      busy: p.busy,
    })),
  );
  expect(ours.jobs).toEqual({ processed: oracle.stats.processed, failed: oracle.stats.failed, enqueued: oracle.stats.enqueued });
  expect(ours.sidekiq).toMatchObject({
    retry_size: oracle.retry_size,
    scheduled_size: oracle.scheduled_size,
    dead_size: oracle.dead_size,
    process_details: oracle.processes.map((p) => ({ identity: p.identity, quiet: p.quiet, beat: p.beat })),
    days: oracle.history,
    queues_total: oracle.queues.length,
    processes_total: oracle.stats.processes_size,
  });
}

describe('sidekiq connection: Jobscope says what Sidekiq says', () => {
  it('reads queues, a real process, counters, the sets and day counters exactly as Sidekiq::Stats, Queue.all, ProcessSet and Stats::History do', async () => {
    // Backlog in queues no process serves, with different ages; one scheduled job.
    await sidekiqRuby(
      redis.url,
      `now = Time.now.to_f
       3.times { |i| Sidekiq::Client.push("class" => "NoopJob", "queue" => "default", "args" => [i]) }
       Sidekiq::Client.push("class" => "NoopJob", "queue" => "mailers", "args" => ["old"])
       # An older job at the tail, as if it had waited 90 s (Sidekiq::Client stamps enqueued_at = now).
       Sidekiq.redis { |c| c.rpush("queue:mailers", Sidekiq.dump_json("class" => "NoopJob", "queue" => "mailers", "args" => [], "jid" => "a" * 24, "enqueued_at" => now - 90.5, "created_at" => now - 90.5)) }
       Sidekiq::Client.push("class" => "NoopJob", "queue" => "emptied", "args" => [])
       Sidekiq.redis { |c| c.del("queue:emptied") }
       Sidekiq::Client.push("class" => "NoopJob", "queue" => "later", "args" => [], "at" => now + 3600)`,
    );
    // A real Sidekiq works the "work" queue: 5 jobs done, 2 failures (one to retry, one dead).
    await sidekiqRuby(
      redis.url,
      `5.times { |i| Sidekiq::Client.push("class" => "NoopJob", "queue" => "work", "args" => [i]) }
       Sidekiq::Client.push("class" => "FailJob", "queue" => "work", "args" => ["x" * 500])
       # The payload's "retry" rules (the client has no DieJob class to read sidekiq_options from): 0 = dead at once.
       Sidekiq::Client.push("class" => "DieJob", "queue" => "work", "retry" => 0, "args" => [{ "user" => 7 }])`,
    );
    worker = startSidekiqApp(redis.url, ['-C', sidekiqConfig, '-q', 'work', '-c', '2', '-g', 'oracle']);
    // Counters reach Redis with the heartbeat (every 0.1 s here, 5 s by default): wait until Sidekiq itself reports them all.
    await waitFor(
      'sidekiq to process the work queue and beat',
      async () => {
        const v = await sidekiqView(redis.url);
        return v.stats.processed === 7 && v.stats.failed === 2 && v.processes.length === 1 && v.dead_size === 1 && v.retry_size === 1 ? v : undefined;
      },
      60_000,
    );
    // Freeze the process so its heartbeat stops rewriting beat/busy between the two reads.
    worker.kill('SIGSTOP');

    const c = await addSidekiq({ redis_url: redis.url });
    expect(c).toMatchObject({ kind: 'sidekiq', base_url: redis.url, namespace: '', has_token: false, warnings: [] });
    const oracle = await sidekiqView(redis.url, 30);
    const ours = await current(c.id);
    expectSameAsSidekiq(ours, oracle, Date.parse(ours.at) / 1000);
    // What the test set up, so a reader that returned nothing everywhere could not pass.
    expect(ours.queues.mailers).toEqual({ backlog: 2, latency: expect.any(Number) });
    expect(ours.queues.mailers!.latency).toBeGreaterThanOrEqual(90);
    expect(ours.queues.emptied).toEqual({ backlog: 0, latency: 0 });
    expect(ours.processes[0]).toMatchObject({ tag: 'oracle', labels: ['canary', 'blue'], queues: ['work'], concurrency: 2, busy: 0 });
    expect(ours.jobs).toEqual({ processed: 7, failed: 2, enqueued: 5 });
    expect(ours.sidekiq).toMatchObject({ retry_size: 1, scheduled_size: 1, dead_size: 1 });
    const today = new Date().toISOString().slice(0, 10);
    expect(ours.sidekiq!.days.processed[today]).toBe(7);
    expect(Object.keys(ours.sidekiq!.days.processed)).toHaveLength(30);

    // Quiet (TSTP): Sidekiq's ProcessSet says "quiet"; so must we.
    worker.kill('SIGCONT');
    worker.kill('SIGTSTP');
    await waitFor('the process to report quiet', async () => ((await sidekiqView(redis.url)).processes[0]?.quiet ? true : undefined), 30_000);
    worker.kill('SIGSTOP');
    const oracle2 = await sidekiqView(redis.url, 30);
    const ours2 = await current(c.id);
    expectSameAsSidekiq(ours2, oracle2, Date.parse(ours2.at) / 1000);
    expect(ours2.sidekiq!.process_details[0]!.quiet).toBe(true);

    // History, CSV and thresholds work as for any connection.
    const h = await api(`/connections/${c.id}/history?from=${Date.now() - 3_600_000}&to=${Date.now() + 60_000}`);
    expect(h.status).toBe(200);
    expect(h.body.queue_names).toContain('mailers');
    const csv = await api(`/connections/${c.id}/export.csv?from=${Date.now() - 3_600_000}&to=${Date.now() + 60_000}`);
    expect(csv.status).toBe(200);
    expect(String(csv.body)).toContain('mailers');
  }, 120_000);

  it('reads a namespaced Sidekiq (redis-namespace: every key prefixed "<ns>:") as Sidekiq reads the same data unprefixed', async () => {
    const db1 = redis.url.replace(/\/0$/, '/1');
    await sidekiqRuby(
      db1,
      `4.times { |i| Sidekiq::Client.push("class" => "NoopJob", "queue" => "ns_q", "args" => [i]) }
       Sidekiq::Client.push("class" => "NoopJob", "queue" => "other", "args" => [])
       Sidekiq.redis { |c| c.set("stat:processed", 41); c.set("stat:failed", 3); c.set("stat:processed:#{Time.now.utc.strftime("%Y-%m-%d")}", 9) }
       Sidekiq.redis { |c| c.zadd("dead", Time.now.to_f, Sidekiq.dump_json("class" => "X", "args" => [], "jid" => "b" * 24)) }
       # A live process as Sidekiq's heartbeat writes it.
       id = "host-a:123:abcdef"
       info = { "hostname" => "host-a", "started_at" => Time.now.to_f - 60, "pid" => 123, "tag" => "ns", "concurrency" => 5, "queues" => ["ns_q"], "labels" => [], "identity" => id }
       Sidekiq.redis { |c| c.sadd("processes", id); c.hset(id, "info", Sidekiq.dump_json(info), "busy", 2, "beat", Time.now.to_f, "quiet", "false", "rss", 1234); c.expire(id, 60) }
       # A dead process: listed, but its hash expired. Sidekiq skips it, so must we.
       Sidekiq.redis { |c| c.sadd("processes", "host-b:9:gone") }`,
    );
    const oracle = await sidekiqView(db1, 30);
    expect(oracle.processes).toHaveLength(1);
    // Move every key under "ns:", as redis-namespace would have written them.
    const r = new Redis(db1);
    for (const k of await r.keys('*')) await r.rename(k, `ns:${k}`);
    r.disconnect();

    const plain = await addSidekiq({ redis_url: db1, enabled: false });
    const t = await api(`/connections/${plain.id}/test`, { method: 'POST' });
    expect(t.body.ok).toBe(true);
    expect(t.body.message).toMatch(/found no Sidekiq data.*namespace/);
    // Reachable is not OK: a warning, saying where the data is.
    expect(t.body.warning).toBe(true);
    expect(t.body.message).toContain('found no Sidekiq data under no namespace');
    expect(t.body.message).toContain('Sidekiq data was found under "ns"');
    const wrong = await api('/connections/test', { method: 'POST', json: { name: 'wrong', kind: 'sidekiq', redis_url: db1, namespace: 'nope' } });
    expect(wrong.body).toMatchObject({ ok: true, warning: true });
    expect(wrong.body.message).toContain('found no Sidekiq data under namespace "nope"');
    expect(wrong.body.message).toContain('check the namespace');
    expect(wrong.body.message).toContain('Sidekiq data was found under "ns"');

    const c = await addSidekiq({ redis_url: db1, namespace: 'ns' });
    expect(c.namespace).toBe('ns');
    const ours = await current(c.id);
    expectSameAsSidekiq(ours, oracle, Date.parse(ours.at) / 1000);
    expect(ours.processes).toHaveLength(1);
    expect(ours.processes[0]).toMatchObject({ hostname: 'host-a', busy: 2, concurrency: 5 });
    expect(ours.jobs).toEqual({ processed: 41, failed: 3, enqueued: 5 });
    expect(ours.sidekiq!.processes_total).toBe(2);
    const right = await api(`/connections/${c.id}/test`, { method: 'POST' });
    expect(right.body.ok).toBe(true);
    expect(right.body.warning).toBeUndefined();

    // Thresholds and alerts work as for any connection.
    expect((await api(`/connections/${c.id}/thresholds`, { method: 'PUT', json: { queues: { ns_q: { backlog: 2 } } } })).status).toBe(200);
    await monitor(s).sampleNow(c.id);
    const alerts = (await api(`/alerts?connection_id=${c.id}`)).body as { kind: string; queue: string; value: number }[];
    expect(alerts).toMatchObject([{ kind: 'backlog', queue: 'ns_q', value: 4 }]);
  }, 60_000);
});

describe('sidekiq connection: failures', () => {
  it('a Redis that is down marks the connection failed with a clear message', async () => {
    const port = await freePort();
    const c = await addSidekiq({ redis_url: `redis://127.0.0.1:${port}/0` });
    await monitor(s).sampleNow(c.id);
    const v = ((await api('/connections')).body as ConnectionView[]).find((x) => x.id === c.id)!;
    expect(v.last_error).toBe(`connection refused by 127.0.0.1:${port}: is redis-server running there, and is the port right?`);
    const cur = await api(`/connections/${c.id}/current`);
    expect(cur.status).toBe(404);
    expect(cur.body.message).toMatch(/connection refused/);
    const t = await api('/connections/test', { json: { name: 'x', kind: 'sidekiq', redis_url: `redis://127.0.0.1:${port}` } });
    expect(t.body).toMatchObject({ ok: false, status: null, sample: null });
    expect(t.body.message).toMatch(/connection refused/);
  });

  it('a Redis that stops answering fails the sample at --sidekiq-timeout-ms, and other connections keep sampling meanwhile', async () => {
    const slow = await startRedis();
    try {
      const c = await addSidekiq({ redis_url: slow.url });
      await monitor(s).sampleNow(c.id);
      expect(((await api('/connections')).body as ConnectionView[]).find((x) => x.id === c.id)!.last_error).toBeNull();
      slow.pause();
      let done = false;
      const pending = monitor(s).sampleNow(c.id).then(() => (done = true));
      // The embedded connection samples while the Redis read hangs.
      await monitor(s).sampleNow('embedded');
      expect(done).toBe(false);
      await pending;
      const v = ((await api('/connections')).body as ConnectionView[]).find((x) => x.id === c.id)!;
      expect(v.last_error).toMatch(new RegExp(`^no answer from Redis at 127\\.0\\.0\\.1:${slow.port} within 1\\.5 s`));
      slow.resume();
      await monitor(s).sampleNow(c.id);
      expect(((await api('/connections')).body as ConnectionView[]).find((x) => x.id === c.id)!.last_error).toBeNull();
    } finally {
      await slow.stop();
    }
  }, 30_000);

  it('a PATCH takes every field the edit form sends, clears the namespace with "", and refuses bad values with a 400 that says what to fix', async () => {
    const c = await addSidekiq({ redis_url: redis.url, namespace: 'ns1', interval_s: 5 });
    const p = await api(`/connections/${c.id}`, { method: 'PATCH', json: { name: 'Renamed', interval_s: 7, namespace: 'ns2' } });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ name: 'Renamed', interval_s: 7, namespace: 'ns2' });
    const cleared = await api(`/connections/${c.id}`, { method: 'PATCH', json: { namespace: '' } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.namespace).toBe('');
    const otherDb = redis.url.replace(/\/\d+$/, '/4');
    const moved = await api(`/connections/${c.id}`, { method: 'PATCH', json: { redis_url: otherDb } });
    expect(moved.status).toBe(200);
    expect(moved.body.base_url).toBe(otherDb);
    for (const [body, msg] of [
      [{ namespace: 'a b' }, /body\/namespace must match pattern/],
      [{ interval_s: 1 }, /interval_s/],
      [{ redis_url: 'http://x' }, /redis_url: only redis:\/\/ and rediss:\/\//],
    ] as const) {
      const r = await api(`/connections/${c.id}`, { method: 'PATCH', json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message, JSON.stringify(body)).toMatch(msg);
    }
  });

  it('rejects bad input with a 400 that says what to fix', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ redis_url: 'http://127.0.0.1:6379' }, /redis_url: only redis:\/\/ and rediss:\/\//],
      [{ redis_url: 'not a url' }, /redis_url: .*is not a URL/],
      [{ redis_url: 'redis://127.0.0.1:6379/abc' }, /database number/],
      [{ redis_url: 'redis://127.0.0.1:6379/0?x=1' }, /no query/],
      [{}, /body must have required property 'redis_url'/],
      [{ redis_url: 'redis://h', namespace: 'a b' }, /body\/namespace must match pattern/],
      [{ redis_url: 'redis://h', interval_s: 1 }, /body\/interval_s must be >= 2/],
      [{ redis_url: 'redis://:one@h', password: 'two' }, /differ/],
    ];
    for (const [body, msg] of cases) {
      const r = await api('/connections', { json: { name: 'x', kind: 'sidekiq', ...body } });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message, JSON.stringify(body)).toMatch(msg);
    }
    // A GitLab body still gets GitLab's complaint, not the sidekiq branch's.
    const g = await api('/connections', { json: { name: 'x', base_url: 'https://gitlab.example.com' } });
    expect(g.status).toBe(400);
    expect(g.body.message).toMatch(/private_token/);
    expect(g.body.message).not.toMatch(/redis_url/);
  });
});

describe('sidekiq connection: the password', () => {
  it('is kept like a private token: never answered, never logged, re-asked when the server changes', async () => {
    const secret = 'redis-SECRET-pw-8812';
    const locked = await startRedis(['--requirepass', secret]);
    try {
      const c = await addSidekiq({ redis_url: `redis://:${secret}@127.0.0.1:${locked.port}/0` });
      expect(c.base_url).toBe(`redis://127.0.0.1:${locked.port}/0`);
      expect(c.has_token).toBe(true);
      const ours = await current(c.id);
      expect(ours.jobs).toEqual({ processed: 0, failed: 0, enqueued: 0 });

      // The password as a field works too; a wrong one and none are told apart, without echoing it.
      const wrong = await addSidekiq({ redis_url: `redis://127.0.0.1:${locked.port}`, password: 'not-it-4455', enabled: false });
      await monitor(s).sampleNow(wrong.id);
      const none = await addSidekiq({ redis_url: `redis://127.0.0.1:${locked.port}`, enabled: false });
      await monitor(s).sampleNow(none.id);
      const list = (await api('/connections')).body as ConnectionView[];
      expect(list.find((x) => x.id === wrong.id)!.last_error).toMatch(/refused the user name or password \(WRONGPASS\)/);
      expect(list.find((x) => x.id === none.id)!.last_error).toMatch(/wants a password \(NOAUTH\)/);
      expect(JSON.stringify(list)).not.toContain(secret);
      expect(JSON.stringify(list)).not.toContain('not-it-4455');

      // Moving to another server needs the password again; changing only the db keeps it.
      const moved = await api(`/connections/${c.id}`, { method: 'PATCH', json: { redis_url: 'redis://10.9.9.9:6379/0' } });
      expect(moved.status).toBe(400);
      expect(moved.body.message).toMatch(/needs its password again/);
      const sameHost = await api(`/connections/${c.id}`, { method: 'PATCH', json: { redis_url: `redis://127.0.0.1:${locked.port}/2` } });
      expect(sameHost.status).toBe(200);
      expect(sameHost.body).toMatchObject({ base_url: `redis://127.0.0.1:${locked.port}/2`, has_token: true });
      await monitor(s).sampleNow(c.id);
      expect(((await api('/connections')).body as ConnectionView[]).find((x) => x.id === c.id)!.last_error).toBeNull();
      const gitlabField = await api(`/connections/${c.id}`, { method: 'PATCH', json: { private_token: 'x' } });
      expect(gitlabField.status).toBe(400);

      // Over plain redis:// to another machine, the password is at risk: the view says so.
      const far = await addSidekiq({ redis_url: 'redis://10.9.9.9:6379/0', password: secret, enabled: false });
      expect(far.warnings.join(' ')).toMatch(/over plain redis:\/\/.*rediss:\/\//);
      const tls = await addSidekiq({ redis_url: 'rediss://10.9.9.9:6380/0', password: secret, enabled: false });
      expect(tls.warnings).toEqual([]);

      // The health change is logged (the log is written asynchronously)…
      const log = await waitFor('the failure in the log', () => {
        const text = fs.readFileSync(path.join(s.dataDir, 'logs', 'jobscope.log'), 'utf8');
        return text.includes(wrong.id) ? text : undefined;
      });
      expect(log).not.toContain(secret); // …but never a password
      expect(log).not.toContain('not-it-4455');
    } finally {
      await locked.stop();
    }
  }, 30_000);
});

describe('sidekiq connection: read-only peeks', () => {
  it('pages a queue, the retry set and the dead set with class, args cut short, times and error', async () => {
    const list = (await api('/connections')).body as ConnectionView[];
    const c = list.find((x) => x.kind === 'sidekiq' && x.base_url === redis.url && x.namespace === '')!;
    const q = await api(`/connections/${c.id}/sidekiq/queues/default?per_page=2`);
    expect(q.status).toBe(200);
    const page = q.body as PeekPage;
    expect(page.total).toBe(3);
    expect(page.jobs).toHaveLength(2);
    // Newest first, as Sidekiq Web shows a queue.
    expect(page.jobs[0]).toMatchObject({ class: 'NoopJob', args: '[2]', args_truncated: false, queue: 'default', unreadable: false, error: null });
    expect(page.jobs[0]!.jid).toMatch(/^[0-9a-f]{24}$/);
    expect(Date.parse(page.jobs[0]!.enqueued_at!)).toBeGreaterThan(Date.now() - 600_000);
    const p2 = (await api(`/connections/${c.id}/sidekiq/queues/default?per_page=2&page=2`)).body as PeekPage;
    expect(p2.jobs.map((j) => j.args)).toEqual(['[0]']);

    const retry = (await api(`/connections/${c.id}/sidekiq/sets/retry`)).body as PeekPage;
    expect(retry.total).toBe(1);
    expect(retry.jobs[0]).toMatchObject({ class: 'FailJob', args_truncated: true, retry_count: 0, error: 'ArgumentError: boom from the fixture' });
    expect(retry.jobs[0]!.args.length).toBeLessThanOrEqual(201);
    // Retries at failed_at + Sidekiq's backoff for a first failure: 15 + rand(10) s.
    const wait = Date.parse(retry.jobs[0]!.at!) - Date.parse(retry.jobs[0]!.failed_at!);
    expect(wait).toBeGreaterThanOrEqual(15_000);
    expect(wait).toBeLessThan(25_000);

    const dead = (await api(`/connections/${c.id}/sidekiq/sets/dead`)).body as PeekPage;
    expect(dead.total).toBe(1);
    expect(dead.jobs[0]).toMatchObject({ class: 'DieJob', args: '[{"user":7}]', error: 'RuntimeError: dies at once' });

    // Read-only and validated.
    expect((await api(`/connections/${c.id}/sidekiq/sets/dead`, { method: 'DELETE' })).status).toBe(404);
    expect((await api(`/connections/${c.id}/sidekiq/sets/everything`)).status).toBe(400);
    expect((await api(`/connections/${c.id}/sidekiq/sets/retry?per_page=1000`)).status).toBe(400);
    const notSidekiq = await api('/connections/embedded/sidekiq/sets/retry');
    expect(notSidekiq.status).toBe(400);
    expect(notSidekiq.body.message).toMatch(/not a sidekiq connection/);
    const down = await addSidekiq({ redis_url: `redis://127.0.0.1:${await freePort()}/0`, enabled: false });
    const bad = await api(`/connections/${down.id}/sidekiq/sets/retry`);
    expect(bad.status).toBe(502);
    expect(bad.body.message).toMatch(/connection refused/);
  });
});
