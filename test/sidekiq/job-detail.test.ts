// Job pages on a sidekiq connection, against a real Sidekiq 6.4: jobs fail in a real `sidekiq`
// process (so the backtrace is compressed by Sidekiq itself), and every field of the answer is
// compared with Sidekiq's own API (DeadSet/RetrySet/ScheduledSet#find_job, Queue#find_job) read
// in Ruby. Entries are named by the key Sidekiq Web builds ("#{score}-#{jid}"), read in Ruby too.
// Broken entries (bad JSON, a corrupt backtrace, a huge argument) answer a clear field, never a 500.
import type { ChildProcess } from 'node:child_process';
import { deflateSync } from 'node:zlib';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby, startSidekiqApp, warmOracle } from '../helpers/sidekiq-oracle.ts';
import { waitFor } from '../helpers/wait.ts';
import type { ConnectionView } from '../../contract/app.ts';
import type { JobDetail } from '../../contract/job-detail.ts';
import type { PeekPage } from '../../contract/sidekiq.ts';

let s: TestServer;
let redis: TestRedis;
let admin: Redis;
let conn: ConnectionView;
let app: ChildProcess | null = null;
const jids: Record<string, string> = {};

const api = (p: string) => http(`${s.url}/api/app/connections/${conn.id}${p}`, { token: s.adminToken });

/** Pushes with Sidekiq's own client; answers the jid. */
async function push(payload: string): Promise<string> {
  return (await sidekiqRuby(redis.url, `print Sidekiq::Client.push(${payload})`)).trim();
}

interface Oracle {
  key: string | null;
  jid: string;
  class: string;
  args: unknown;
  queue: string;
  created_at: number | null;
  enqueued_at: number | null;
  failed_at: number | null;
  retried_at: number | null;
  retry_count: number | null;
  retry: unknown;
  error_class: string | null;
  error_message: string | null;
  backtrace: string[] | null;
  tags: string[];
  bid: string | null;
  at: number | null;
  latency: number | null;
}

/** Sidekiq's JobRecord for `jid`, found by Sidekiq's API (`finder` is Ruby naming the set or queue). */
async function oracle(finder: string, jid: string): Promise<Oracle> {
  const out = await sidekiqRuby(
    redis.url,
    `r = ${finder}.find_job(${JSON.stringify(jid)})
     sorted = r.respond_to?(:score)
     puts JSON.generate(key: sorted ? "#{r.score}-#{r.jid}" : nil, jid: r.jid, class: r.display_class, args: r.display_args, queue: r.queue,
       created_at: r.created_at&.to_f, enqueued_at: r.enqueued_at&.to_f, failed_at: r["failed_at"], retried_at: r["retried_at"],
       retry_count: r["retry_count"], retry: r["retry"], error_class: r["error_class"], error_message: r["error_message"],
       backtrace: r.error_backtrace, tags: r.tags, bid: r["bid"], at: sorted ? r.at.to_f : nil, latency: sorted ? nil : r.latency)`,
  );
  return JSON.parse(out) as Oracle;
}

const iso = (s: number | null) => (s === null ? null : new Date(s * 1000).toISOString());

/** The answer's fields against Sidekiq's, one by one. */
function expectSame(d: JobDetail, o: Oracle, set: 'retry' | 'schedule' | 'dead' | 'queue') {
  expect(d).toMatchObject({
    where: set,
    key: o.key,
    jid: o.jid,
    class: o.class,
    args: o.args,
    queue: o.queue,
    created_at: iso(o.created_at),
    enqueued_at: iso(o.enqueued_at),
    failed_at: iso(o.failed_at),
    retried_at: iso(o.retried_at),
    retry_count: o.retry_count,
    retry: o.retry,
    error_class: o.error_class,
    error_message: o.error_message,
    backtrace: o.backtrace,
    backtrace_note: null,
    tags: o.tags,
    bid: o.bid,
    unreadable: false,
    next_retry_at: set === 'retry' ? iso(o.at) : null,
    scheduled_at: set === 'schedule' ? iso(o.at) : null,
    died_at: set === 'dead' ? iso(o.at) : null,
  });
}

beforeAll(async () => {
  warmOracle();
  redis = await startRedis();
  admin = new Redis(redis.url);
  s = await startServer({ monitorIntervalMs: 3_600_000, mode: 'test', sidekiqTimeoutMs: 5000, jobSearchMax: 100 });
  const r = await http(`${s.url}/api/app/connections`, { token: s.adminToken, json: { name: 'detail', kind: 'sidekiq', redis_url: redis.url } });
  expect(r.status).toBe(201);
  conn = r.body as ConnectionView;

  // A real Sidekiq fails these: one dies at once, one waits for its retry, both keep their backtrace.
  app = startSidekiqApp(redis.url, ['-q', 'detail', '-c', '2']);
  jids.dead = await push(`"class" => "DieJob", "queue" => "detail", "args" => [{"account" => 42}, "eu"], "retry" => 0, "backtrace" => true, "tags" => ["billing", "urgent"]`);
  jids.retry = await push(`"class" => "FailJob", "queue" => "detail", "args" => [7], "retry" => 3, "backtrace" => 2, "tags" => ["billing"]`);
  await waitFor('both jobs failed', async () => ((await admin.zcard('dead')) === 1 && (await admin.zcard('retry')) === 1 ? true : undefined), 60_000, 100);
  // Stopped before its scheduler would move the retry back into its queue.
  app.kill('SIGKILL');

  jids.scheduled = await push(`"class" => "NoopJob", "queue" => "later", "args" => ["x"], "at" => Time.now.to_f + 3600, "bid" => "batch-1"`);
  jids.wrapped = await push(`"class" => "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", "wrapped" => "InvoiceMailer", "queue" => "parked", "args" => [{"job_class" => "InvoiceMailer", "arguments" => [12, "paid"]}]`);
  jids.plain = await push(`"class" => "NoopJob", "queue" => "parked", "args" => [{"n" => 1}]`);
  // Pushed first, so 150 newer jobs stand before it in LRANGE order (newest first).
  jids.deep = await push(`"class" => "NoopJob", "queue" => "long", "args" => ["the oldest"]`);
  await sidekiqRuby(redis.url, `Sidekiq::Client.push_bulk("class" => "NoopJob", "queue" => "long", "args" => Array.new(150) { |i| [i] })`);
}, 120_000);

afterAll(async () => {
  if (app && app.exitCode === null) app.kill('SIGKILL');
  admin?.disconnect();
  await s?.close();
  await redis?.stop();
});

describe('a sidekiq connection: every field as Sidekiq’s API reads it', () => {
  it('a dead job, by the key Sidekiq Web gives it: its death time, first failure, decoded backtrace and tags', async () => {
    const o = await oracle('Sidekiq::DeadSet.new', jids.dead!);
    const r = await api(`/jobs/sets/dead/${encodeURIComponent(o.key!)}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const d = r.body as JobDetail;
    expectSame(d, o, 'dead');
    expect(d.backtrace!.length).toBeGreaterThan(2);
    expect(d.backtrace![0]).toMatch(/workers\.rb:\d+/);
    expect(d.tags).toEqual(['billing', 'urgent']);
    expect(d).toMatchObject({ error_class: 'RuntimeError', error_message: 'dies at once', retry: 0, retry_count: 0, args: [{ account: 42 }, 'eu'] });
    expect(JSON.parse(d.raw)).toMatchObject({ jid: jids.dead, error_backtrace: expect.any(String) });
  });

  it('a job waiting for its retry: next retry from the score, the backtrace cut to what the job asked for', async () => {
    const o = await oracle('Sidekiq::RetrySet.new', jids.retry!);
    const d = (await api(`/jobs/sets/retry/${encodeURIComponent(o.key!)}`)).body as JobDetail;
    expectSame(d, o, 'retry');
    expect(d.backtrace).toHaveLength(2);
  });

  it('a scheduled job: when it runs, and its batch id', async () => {
    const o = await oracle('Sidekiq::ScheduledSet.new', jids.scheduled!);
    const d = (await api(`/jobs/sets/schedule/${encodeURIComponent(o.key!)}`)).body as JobDetail;
    expectSame(d, o, 'schedule');
    expect(d.bid).toBe('batch-1');
  });

  it("queued jobs by jid: ActiveJob's wrapped class and arguments, and the latency", async () => {
    for (const jid of [jids.wrapped!, jids.plain!]) {
      const o = await oracle('Sidekiq::Queue.new("parked")', jid);
      const r = await api(`/jobs/queues/parked/${jid}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const d = r.body as JobDetail;
      expectSame(d, o, 'queue');
      expect(d.latency!).toBeGreaterThanOrEqual(o.latency! - 1);
    }
    expect((await api(`/jobs/queues/parked/${jids.wrapped}`)).body).toMatchObject({ class: 'InvoiceMailer', wrapper_class: 'ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper', args: [12, 'paid'] });
  });

  it('a job deeper in its queue than the search bound: a 404 that says the search stopped, not that it is gone', async () => {
    const r = await api(`/jobs/queues/long/${jids.deep}`);
    expect(r.status).toBe(404);
    expect(r.body.message).toMatch(/not among the first 100 jobs of queue "long".*--job-search-max/);
    // One of the newest is found.
    const newest = JSON.parse((await admin.lindex('queue:long', 0))!) as { jid: string };
    expect((await api(`/jobs/queues/long/${newest.jid}`)).status).toBe(200);
    expect((await api('/jobs/queues/parked/0123456789abcdef01234567')).body.message).toMatch(/not in queue "parked": it ran, or was deleted/);
  });

  it("the lists give each entry Sidekiq Web's key, and a queue's page its latency as Sidekiq's Queue#latency", async () => {
    for (const [set, finder, jid] of [['dead', 'Sidekiq::DeadSet.new', jids.dead], ['retry', 'Sidekiq::RetrySet.new', jids.retry], ['schedule', 'Sidekiq::ScheduledSet.new', jids.scheduled]] as const) {
      const page = (await api(`/sidekiq/sets/${set}`)).body as PeekPage;
      expect(page.jobs.find((j) => j.jid === jid)!.key, set).toBe((await oracle(finder, jid!)).key);
    }
    const q = (await api('/sidekiq/queues/parked')).body as PeekPage;
    const latency = Number(await sidekiqRuby(redis.url, 'print Sidekiq::Queue.new("parked").latency'));
    expect(Math.abs(q.latency! - latency)).toBeLessThan(5);
    expect(q.latency!).toBeGreaterThan(0);
    expect(q.jobs.every((j) => j.key === null)).toBe(true);
  });

  it('a retried job is gone: 404 saying so', async () => {
    const o = await oracle('Sidekiq::RetrySet.new', jids.retry!);
    await sidekiqRuby(redis.url, `Sidekiq::RetrySet.new.find_job(${JSON.stringify(jids.retry)}).retry`);
    const r = await api(`/jobs/sets/retry/${encodeURIComponent(o.key!)}`);
    expect(r.status).toBe(404);
    expect(r.body.message).toMatch(/no longer in the retry set: it was retried/);
  });
});

describe('a sidekiq connection: broken entries and bad requests', () => {
  it('an entry that is no JSON answers raw only, as Sidekiq Web lists it', async () => {
    await admin.zadd('dead', '1700000000.5', 'not {json');
    const r = await api(`/jobs/sets/dead/${encodeURIComponent('1700000000.5-')}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ unreadable: true, raw: 'not {json', class: null, args: null, jid: null, died_at: '2023-11-14T22:13:20.500Z' });
  });

  it('a corrupt backtrace is said so, the rest of the job still answers', async () => {
    const payload = JSON.stringify({ class: 'X', jid: 'corrupt-1', queue: 'q', args: [], error_backtrace: 'bm90IHpsaWI=\n', error_class: 'E', error_message: 'm' });
    await admin.zadd('retry', '1700000001', payload);
    const d = (await api('/jobs/sets/retry/1700000001.0-corrupt-1')).body as JobDetail;
    expect(d).toMatchObject({ class: 'X', error_class: 'E', backtrace: null, backtrace_note: expect.stringMatching(/^backtrace could not be decoded/) });
  });

  it("an older Sidekiq's backtrace (an array) is shown as is; one that inflates past the bound is refused, not inflated", async () => {
    const old = JSON.stringify({ class: 'Old', jid: 'old-1', queue: 'q', args: [], error_backtrace: ['app.rb:1:in `x`', 'app.rb:2:in `y`'] });
    await admin.zadd('dead', '1700000003', old);
    expect((await api('/jobs/sets/dead/1700000003.0-old-1')).body).toMatchObject({ backtrace: ['app.rb:1:in `x`', 'app.rb:2:in `y`'], backtrace_note: null });
    // 64 MiB of JSON deflated to ~64 KiB: a few bytes of Base64 must not cost the server 64 MiB.
    const bomb = deflateSync(Buffer.from(`[${'"a",'.repeat(16 * 2 ** 20)}"a"]`)).toString('base64');
    await admin.zadd('dead', '1700000004', JSON.stringify({ class: 'Bomb', jid: 'bomb-1', queue: 'q', args: [], error_backtrace: bomb }));
    const r = await api('/jobs/sets/dead/1700000004.0-bomb-1');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ class: 'Bomb', backtrace: null, backtrace_note: expect.stringMatching(/^backtrace could not be decoded/) });
  });

  it('a huge argument: the args are left out with the reason and the raw text is cut and marked', async () => {
    const payload = JSON.stringify({ class: 'Big', jid: 'big-1', queue: 'q', args: ['x'.repeat(400_000)] });
    await admin.zadd('schedule', '1700000002', payload);
    const r = await api('/jobs/sets/schedule/1700000002-big-1');
    expect(r.status).toBe(200);
    const d = r.body as JobDetail;
    expect(d).toMatchObject({ class: 'Big', args: null, args_note: expect.stringMatching(/KiB of JSON.*raw payload/), raw_truncated: true });
    expect(d.raw.length).toBe(256 * 1024);
  });

  it('bad keys and unknown sets are 4xx with a message; an unknown connection a 404', async () => {
    for (const [path, status] of [
      ['/jobs/sets/dead/no-score-here', 400],
      ['/jobs/sets/dead/12345', 400],
      ['/jobs/sets/morgue/1-abc', 400],
      ['/jobs/sets/dead/1.5-nobody', 404],
    ] as const) {
      const r = await api(path);
      expect(r.status, path).toBe(status);
      expect(typeof r.body.message, path).toBe('string');
    }
    const gone = await http(`${s.url}/api/app/connections/sk-nope/jobs/sets/dead/1-a`, { token: s.adminToken });
    expect(gone.status).toBe(404);
  });

  it('a GitLab connection has no jobs to open (400 saying why); a Redis that is down is a 502 naming it', async () => {
    const add = (json: Record<string, unknown>) => http(`${s.url}/api/app/connections`, { token: s.adminToken, json });
    const gitlab = (await add({ name: 'gitlab', base_url: 'http://127.0.0.1:1', private_token: 't' })).body as ConnectionView;
    const r = await http(`${s.url}/api/app/connections/${gitlab.id}/jobs/queues/default/abc`, { token: s.adminToken });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/GitLab read over HTTP: .* no job of it can be opened/);
    const down = (await add({ name: 'down', kind: 'sidekiq', redis_url: 'redis://127.0.0.1:1/0' })).body as ConnectionView;
    const d = await http(`${s.url}/api/app/connections/${down.id}/jobs/sets/dead/1-a`, { token: s.adminToken });
    expect(d.status).toBe(502);
    expect(d.body.message).toMatch(/127\.0\.0\.1:1/);
  });
});
