// Actions on a watched Sidekiq, as Sidekiq Web does them, checked with Sidekiq 6.4's own API (the
// oracle): retry, kill, add to queue, delete, the bulk forms, delete a queued job, clear a queue,
// quiet and stop a real `sidekiq` process. Off until the connection allows changes.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { useRedis } from '../helpers/redis.ts';
import { sidekiqRuby, startSidekiqApp, warmOracle } from '../helpers/sidekiq-oracle.ts';
import { waitFor } from '../helpers/wait.ts';
import { Prng } from '../../common/prng.ts';
import type { ConnectionView } from '../../contract/app.ts';
import type { PeekPage } from '../../contract/sidekiq.ts';
import type { ActionDone } from '../../contract/job-actions.ts';
import { SidekiqActions } from '../../server/sidekiq/actions.ts';

const redis = useRedis();
let s: TestServer;
let conn: ConnectionView;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  warmOracle();
  s = await startServer({ monitorIntervalMs: 3_600_000, mode: 'test', sidekiqTimeoutMs: 3000, logLevel: 'info' });
  const r = await api('/connections', { json: { name: 'Billing Sidekiq', kind: 'sidekiq', redis_url: redis.url } });
  conn = r.body as ConnectionView;
}, 60_000);
afterAll(async () => {
  for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
  await s?.close();
});

const api = (p: string, opts: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app${p}`, { token: s.adminToken, ...opts });
const post = (p: string) => api(`/connections/${conn.id}${p}`, { method: 'POST' });
const del = (p: string) => api(`/connections/${conn.id}${p}`, { method: 'DELETE' });

/** Runs Ruby against the Redis and answers what it printed as JSON. */
async function rb<T>(code: string): Promise<T> {
  return JSON.parse(await sidekiqRuby(redis.url, `require "json"\nputs JSON.generate(begin\n${code}\nend)`)) as T;
}

/** Empties the Redis (Sidekiq's own flush), then runs `code` to seed it. */
async function seed(code: string): Promise<void> {
  await sidekiqRuby(redis.url, `Sidekiq.redis { |c| c.flushdb }\n${code}`);
}

/** A job payload as Sidekiq writes one into its retry or dead set. */
const failed = (jid: string, queue: string, retryCount: number) =>
  `Sidekiq.dump_json("class" => "FailJob", "queue" => "${queue}", "args" => [1, "x"], "jid" => "${jid}", "retry" => true, "retry_count" => ${retryCount}, "error_class" => "ArgumentError", "error_message" => "boom", "failed_at" => Time.now.to_f - 60, "created_at" => Time.now.to_f - 120, "enqueued_at" => Time.now.to_f - 61)`;

async function keyOf(set: 'retry' | 'schedule' | 'dead', jid: string): Promise<string> {
  const page = (await api(`/connections/${conn.id}/sidekiq/sets/${set}?per_page=100`)).body as PeekPage;
  const job = page.jobs.find((j) => j.jid === jid);
  if (!job?.key) throw new Error(`${jid} not listed in ${set}: ${JSON.stringify(page.jobs.map((j) => j.jid))}`);
  return job.key;
}

describe('a sidekiq connection is read-only until its user allows changes', () => {
  it('refuses every action with 403 naming the connection and what to do, and PATCH allow_changes turns them on', async () => {
    expect(conn.allow_changes).toBe(false);
    await seed(`Sidekiq.redis { |c| c.zadd("retry", Time.now.to_f + 600, ${failed('r'.repeat(24), 'default', 2)}) }`);
    const key = await keyOf('retry', 'r'.repeat(24));
    for (const r of [
      await post(`/jobs/sets/retry/${encodeURIComponent(key)}/retry`),
      await del(`/jobs/sets/retry/${encodeURIComponent(key)}`),
      await post('/jobs/sets/retry/all/kill'),
      await del('/jobs/sets/dead'),
      await del('/jobs/queues/default/abc'),
      await del('/jobs/queues/default'),
      await post('/processes/host:1:abc/quiet'),
    ]) {
      expect(r.status).toBe(403);
      expect((r.body as { message: string }).message).toContain("turn on 'allow changes' for Billing Sidekiq in Connections");
    }
    expect(await rb<number>('Sidekiq::RetrySet.new.size')).toBe(1);

    const on = await api(`/connections/${conn.id}`, { method: 'PATCH', json: { allow_changes: true } });
    expect(on.status).toBe(200);
    expect((on.body as ConnectionView).allow_changes).toBe(true);
    const listed = (await api('/connections')).body as ConnectionView[];
    expect(listed.find((c) => c.id === conn.id)!.allow_changes).toBe(true);
    expect(listed.find((c) => c.kind === 'embedded')!.allow_changes).toBe(true);
  });
});

/** Every describe after the first acts on a connection that allows changes, whichever tests run. */
const allowChanges = () => api(`/connections/${conn.id}`, { method: 'PATCH', json: { allow_changes: true } });

describe('one entry at a time, as Sidekiq Web', () => {
  beforeAll(allowChanges);
  it('retry now puts a retry entry into its queue with retry_count - 1; the key then answers 404', async () => {
    const jid = 'a1'.repeat(12);
    await seed(`Sidekiq.redis { |c| c.zadd("retry", Time.now.to_f + 600, ${failed(jid, 'mailers', 2)}) }`);
    const key = await keyOf('retry', jid);
    const r = await post(`/jobs/sets/retry/${encodeURIComponent(key)}/retry`);
    expect(r.status).toBe(200);
    expect((r.body as ActionDone).count).toBe(1);
    const after = await rb<{ inRetry: boolean; queued: { retry_count: number; enqueued_at: number } | null; queues: string[] }>(
      `{ inRetry: !Sidekiq::RetrySet.new.find_job("${jid}").nil?, queued: Sidekiq::Queue.new("mailers").find_job("${jid}")&.item, queues: Sidekiq::Queue.all.map(&:name) }`,
    );
    expect(after.inRetry).toBe(false);
    expect(after.queued!.retry_count).toBe(1);
    expect(Math.abs(after.queued!.enqueued_at - Date.now() / 1000)).toBeLessThan(60);
    expect(after.queues).toEqual(['mailers']);
    const again = await post(`/jobs/sets/retry/${encodeURIComponent(key)}/retry`);
    expect(again.status).toBe(404);
    expect((again.body as { message: string }).message).toMatch(/no longer in the retry set/);
    // Logged: what, on which connection (by name), and that changes were allowed on it first.
    const log = await waitFor('the action in the log', () => {
      const text = fs.readFileSync(path.join(s.dataDir, 'logs', 'jobscope.log'), 'utf8');
      return text.includes(`retry retry entry ${key} on Billing Sidekiq: 1 done`) ? text : undefined;
    });
    expect(log).toContain('Billing Sidekiq: changes allowed');
  });

  it('retry keeps the rest of the payload byte for byte: an integer past 2^53 in the args stays exact', async () => {
    await seed(`Sidekiq.redis { |c| c.zadd("retry", 1764000000.25, '{"class":"BigJob","queue":"big","args":[12345678901234567891,{"k":1.50}],"jid":"big1","retry_count":3}') }`);
    expect((await post(`/jobs/sets/retry/${encodeURIComponent('1764000000.25-big1')}/retry`)).status).toBe(200);
    const out = await sidekiqRuby(redis.url, 'j = Sidekiq::Queue.new("big").first; puts [j.args.first, j.item["retry_count"], Sidekiq.redis { |c| c.lindex("queue:big", 0) }.include?(\'{"k":1.50}\')].join(" ")');
    expect(out.trim()).toBe('12345678901234567891 2 true');
  });

  it('kill moves a retry or scheduled entry into the DeadSet; add to queue moves a scheduled job unchanged; delete removes a dead one', async () => {
    const [rj, sj, sj2, dj] = ['k1'.repeat(12), 's1'.repeat(12), 's2'.repeat(12), 'd1'.repeat(12)];
    await seed(
      `Sidekiq.redis { |c| c.zadd("retry", Time.now.to_f + 600, ${failed(rj, 'default', 1)}); c.zadd("dead", Time.now.to_f - 5, ${failed(dj, 'default', 25)}) }
       Sidekiq::Client.push("class" => "NoopJob", "queue" => "later", "args" => [1], "jid" => "${sj}", "at" => Time.now.to_f + 3600)
       Sidekiq::Client.push("class" => "NoopJob", "queue" => "later", "args" => [2], "jid" => "${sj2}", "at" => Time.now.to_f + 3600)`,
    );
    expect((await post(`/jobs/sets/retry/${encodeURIComponent(await keyOf('retry', rj))}/kill`)).status).toBe(200);
    expect((await post(`/jobs/sets/schedule/${encodeURIComponent(await keyOf('schedule', sj))}/kill`)).status).toBe(200);
    expect((await post(`/jobs/sets/schedule/${encodeURIComponent(await keyOf('schedule', sj2))}/enqueue`)).status).toBe(200);
    expect((await del(`/jobs/sets/dead/${encodeURIComponent(await keyOf('dead', dj))}`)).status).toBe(200);
    const v = await rb<{ dead: string[]; retry: number; scheduled: number; queued: { args: unknown[] } | null; deathAge: number }>(
      `dead = Sidekiq::DeadSet.new
       { dead: dead.map(&:jid).sort, retry: Sidekiq::RetrySet.new.size, scheduled: Sidekiq::ScheduledSet.new.size,
         queued: Sidekiq::Queue.new("later").find_job("${sj2}")&.item, deathAge: Time.now.to_f - dead.find_job("${rj}").score }`,
    );
    expect(v.dead).toEqual([rj, sj].sort());
    expect(v.retry).toBe(0);
    expect(v.scheduled).toBe(0);
    expect(v.queued!.args).toEqual([2]);
    expect(v.deathAge).toBeLessThan(60);
    // Killing the dead and keys that name nothing are refused, saying why.
    const seeded = await rb<string>(`Sidekiq::DeadSet.new.find_job("${rj}").then { |e| "#{e.score}-#{e.jid}" }`);
    expect((await post(`/jobs/sets/dead/${encodeURIComponent(seeded)}/kill`)).status).toBe(409);
    expect((await post('/jobs/sets/dead/nodash/retry')).status).toBe(400);
  });

  it('deletes one queued job by jid (its exact value) and clears a queue (gone from Sidekiq::Queue.all)', async () => {
    await seed('5.times { |i| Sidekiq::Client.push("class" => "NoopJob", "queue" => "q1", "args" => [i], "jid" => "q1job#{i}") }; Sidekiq::Client.push("class" => "NoopJob", "queue" => "q2", "args" => [])');
    expect((await del('/jobs/queues/q1/q1job3')).status).toBe(200);
    expect((await del('/jobs/queues/q1/q1job3')).status).toBe(404);
    const cleared = await del('/jobs/queues/q2');
    expect(cleared.status).toBe(200);
    expect((cleared.body as ActionDone).count).toBe(1);
    const v = await rb<{ jids: string[]; queues: string[] }>('{ jids: Sidekiq::Queue.new("q1").map(&:jid).sort, queues: Sidekiq::Queue.all.map(&:name) }');
    expect(v.jids).toEqual(['q1job0', 'q1job1', 'q1job2', 'q1job4']);
    expect(v.queues).toEqual(['q1']);
    expect((await del('/jobs/queues/q2')).status).toBe(404);
  });
});

describe('bulk actions, one entry at a time', () => {
  beforeAll(allowChanges);
  it('retry all of 300 retries, kill all of 250 scheduled, delete all of the dead', async () => {
    await seed(
      `Sidekiq.redis do |c|
         300.times { |i| c.zadd("retry", Time.now.to_f + i, Sidekiq.dump_json("class" => "FailJob", "queue" => "bulk", "args" => [i], "jid" => "bulk#{i}", "retry_count" => 3)) }
         c.zadd("retry", Time.now.to_f, "not json at all")
       end
       250.times { |i| Sidekiq::Client.push("class" => "NoopJob", "queue" => "later", "args" => [i], "at" => Time.now.to_f + 3600 + i) }`,
    );
    const retried = await post('/jobs/sets/retry/all/retry');
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ count: 300, left: 1 });
    const killed = await post('/jobs/sets/schedule/all/kill');
    expect(killed.body).toMatchObject({ count: 250, left: 0 });
    let v = await rb<{ retry: number; bulk: number; counts: number[]; dead: number; scheduled: number }>(
      '{ retry: Sidekiq::RetrySet.new.size, bulk: Sidekiq::Queue.new("bulk").size, counts: Sidekiq::Queue.new("bulk").map { |j| j.item["retry_count"] }.uniq, dead: Sidekiq::DeadSet.new.size, scheduled: Sidekiq::ScheduledSet.new.size }',
    );
    expect(v).toEqual({ retry: 1, bulk: 300, counts: [2], dead: 250, scheduled: 0 });
    const deleted = await del('/jobs/sets/dead');
    expect(deleted.body).toMatchObject({ count: 250, left: 0 });
    v = await rb('{ dead: Sidekiq::DeadSet.new.size }');
    expect(v).toEqual({ dead: 0 });
  }, 60_000);
});

describe('a bulk action within its time', () => {
  it('stops at its budget and answers what is left, each entry moved or not, never half', async () => {
    await seed('Sidekiq.redis { |c| 250.times { |i| c.zadd("retry", i, Sidekiq.dump_json("class" => "X", "queue" => "slow", "args" => [i], "jid" => "slow#{i}")) } }');
    let t = 0;
    // Each look at the clock is 40 ms later: the 100 ms budget allows a few batches of 100, not all.
    const actions = new SidekiqActions(redis.client, '', () => (t += 40), 100);
    const done = await actions.moveAll('retry', 'queue');
    expect(done.count).toBeGreaterThan(0);
    expect(done.left).toBeGreaterThan(0);
    expect(done.count + done.left).toBe(250);
    expect(await rb('{ retry: Sidekiq::RetrySet.new.size, queued: Sidekiq::Queue.new("slow").size }')).toEqual({ retry: done.left, queued: done.count });
  });
});

describe('a model of the sets, compared with Sidekiq after every step', () => {
  beforeAll(allowChanges);
  it('random actions over a few entries keep Redis where Sidekiq’s API says the model is', async () => {
    type Where = 'retry' | 'schedule' | 'dead' | 'queue' | 'gone';
    const model = new Map<string, Where>();
    const jids = Array.from({ length: 8 }, (_, i) => `model${i}`);
    const start: Where[] = ['retry', 'retry', 'retry', 'schedule', 'schedule', 'dead', 'dead', 'dead'];
    await seed(
      jids
        .map((jid, i) => {
          model.set(jid, start[i]!);
          if (start[i] === 'schedule') return `Sidekiq::Client.push("class" => "NoopJob", "queue" => "m", "args" => [${i}], "jid" => "${jid}", "at" => Time.now.to_f + 3600 + ${i})`;
          return `Sidekiq.redis { |c| c.zadd("${start[i]}", Time.now.to_f + ${i}, ${failed(jid, 'm', 3)}) }`;
        })
        .join('\n'),
    );
    const prng = new Prng(32);
    const actions = ['retry', 'kill', 'enqueue', 'delete'] as const;
    for (let step = 0; step < 24; step++) {
      const jid = jids[Math.floor(prng.next() * jids.length)]!;
      const action = actions[Math.floor(prng.next() * actions.length)]!;
      const where = model.get(jid)!;
      const set = where === 'retry' || where === 'schedule' || where === 'dead' ? where : null;
      if (!set) {
        // Gone from the sets: any key for it names nothing.
        expect((await post(`/jobs/sets/retry/${encodeURIComponent(`1.0-${jid}`)}/retry`)).status, `step ${step}`).toBe(404);
        continue;
      }
      const key = encodeURIComponent(await keyOf(set, jid));
      const r = action === 'delete' ? await del(`/jobs/sets/${set}/${key}`) : await post(`/jobs/sets/${set}/${key}/${action}`);
      const next: Where | null = action === 'delete' ? 'gone' : action === 'kill' ? (set === 'dead' ? null : 'dead') : 'queue';
      if (next === null) expect(r.status, `step ${step}: kill ${set}`).toBe(409);
      else {
        expect(r.status, `step ${step}: ${action} ${set}`).toBe(200);
        model.set(jid, next);
      }
      const seen = await rb<Record<string, Where>>(
        `ids = ${JSON.stringify(jids)}
         r = Sidekiq::RetrySet.new; sc = Sidekiq::ScheduledSet.new; d = Sidekiq::DeadSet.new; q = Sidekiq::Queue.new("m")
         ids.to_h { |j| [j, r.find_job(j) ? "retry" : sc.find_job(j) ? "schedule" : d.find_job(j) ? "dead" : q.find_job(j) ? "queue" : "gone"] }`,
      );
      expect(seen, `after step ${step}: ${action} ${jid} in ${set}`).toEqual(Object.fromEntries(model));
    }
  }, 120_000);
});

describe('processes', () => {
  beforeAll(allowChanges);
  it('quiet makes a real sidekiq stopping? in Sidekiq::ProcessSet; stop makes it exit', async () => {
    await seed('');
    const p = startSidekiqApp(redis.url, ['-q', 'a', '-c', '2', '-g', 'act-on-me']);
    workers.push(p);
    const identity = await waitFor('the process listed', async () => (await rb<string[]>('Sidekiq::ProcessSet.new.map(&:identity)'))[0], 30_000, 100);
    expect((await post(`/processes/${encodeURIComponent(identity)}/quiet`)).status).toBe(200);
    await waitFor('stopping? true', async () => ((await rb<boolean[]>('Sidekiq::ProcessSet.new.map(&:stopping?)'))[0] ? true : undefined), 30_000, 100);
    expect((await post(`/processes/${encodeURIComponent(identity)}/stop`)).status).toBe(200);
    await waitFor('the process to exit', () => (p.exitCode !== null || p.signalCode !== null ? true : undefined), 40_000, 100);
    expect((await post('/processes/nobody:1:x/quiet')).status).toBe(404);
  }, 90_000);
});

describe('a frozen Redis', () => {
  it('answers an action 503 with Retry-After within the timeout, and the next one works after SIGCONT', async () => {
    await seed(`Sidekiq.redis { |c| c.zadd("dead", Time.now.to_f, ${failed('f'.repeat(24), 'default', 3)}) }`);
    const key = encodeURIComponent(await keyOf('dead', 'f'.repeat(24)));
    await allowChanges();
    redis.server.pause();
    try {
      const r = await post(`/jobs/sets/dead/${key}/retry`);
      expect(r.status).toBe(503);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((r.body as { message: string }).message).toMatch(/127\.0\.0\.1/);
    } finally {
      redis.server.resume();
    }
    // A retry cut off by the timeout may still have run once Redis woke: either way it ran at most once.
    const again = await post(`/jobs/sets/dead/${key}/retry`);
    expect([200, 404]).toContain(again.status);
    expect(await rb<number>('Sidekiq::Queue.new("default").size')).toBe(1);
  }, 60_000);
});
