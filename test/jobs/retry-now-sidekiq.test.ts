// Retry now and Kill counted as Sidekiq 6.4 counts them, differentially: one job (retry: 3) fails,
// fails again when its retry comes due, is retried by hand from the retry set and fails, is killed,
// is retried by hand from the dead set and fails. Sidekiq's own JobRetry, SortedEntry#retry and
// #kill (in the oracle's Ruby) give the retry_count after each step; the embedded job system on
// SQLite, on Redis (`serve --redis`) and on PostgreSQL must show the same. A manual clock holds
// scheduled retries back, so only the steps taken here move the job.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers/redis.ts';
import { useServers } from '../helpers/server-set.ts';
import type { TestServer } from '../helpers/server.ts';
import { postgresMissing, usePostgres } from '../helpers/postgres.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { ManualClock } from '../../server/clock.ts';
import { flakyJobInSidekiq, onRedis, postJobs } from './lib.ts';

type Step = { set: 'retry' | 'dead'; retry_count: number | null };

const redis = useRedis();
let sidekiq: Step[];
let sidekiqDead0: Step[];

beforeAll(async () => {
  ({ main: sidekiq, dead0: sidekiqDead0 } = await flakyJobInSidekiq<{ main: Step[]; dead0: Step[] }>(
    redis.url,
    `steps = []
     fail = lambda do |payload|
       begin
         r.global(payload, "flaky") { raise "boom" }
       rescue Sidekiq::JobRetry::Handled
       end
     end
     seen = lambda do |name, set|
       e = set.first
       steps << { "set" => name, "retry_count" => e.item["retry_count"] }
       e
     end
     queued = lambda do
       q = Sidekiq::Queue.new("flaky")
       payload = q.first.value
       q.clear
       payload
     end
     fail.(job)
     e = seen.("retry", Sidekiq::RetrySet.new)
     job = e.value # the scheduler moves it back unchanged
     e.delete
     fail.(job)
     seen.("retry", Sidekiq::RetrySet.new).retry
     fail.(queued.())
     seen.("retry", Sidekiq::RetrySet.new).kill
     seen.("dead", Sidekiq::DeadSet.new).retry
     fail.(queued.())
     seen.("retry", Sidekiq::RetrySet.new)
     main = steps
     steps = []
     Sidekiq::RetrySet.new.clear
     fail.(Sidekiq.dump_json("class" => "DoomedJob", "queue" => "flaky", "args" => [{}], "jid" => "d" * 24, "retry" => 0, "created_at" => now, "enqueued_at" => now))
     seen.("dead", Sidekiq::DeadSet.new).retry
     fail.(queued.())
     seen.("dead", Sidekiq::DeadSet.new)
     print JSON.generate({ "main" => main, "dead0" => steps })`,
  ));
  await redis.client.flushdb();
});

type Entry = { key: string; queue: string; retry_count: number | null; failed_at: string | null };
const list = async (s: TestServer, set: 'retries' | 'dead') =>
  {
    const r = await http(`${s.url}/api/v3/sim/jobs/${set}?per_page=1000`, { token: s.adminToken });
    if (r.status !== 200) throw new Error(`GET ${set}: ${r.status} ${r.raw.toString()}`);
    return (r.body as Entry[]).filter((j) => j.queue === 'flaky');
  };

/** Where the job is next: its entry once it is in the retry or the dead set and not as `before` (a name and a failure time: each step moves the clock on). */
const placeOf = (at: { set: Step['set']; entry: Entry }) => `${at.set} ${at.entry.key} ${at.entry.failed_at}`;
const next = (s: TestServer, before: string, steps: Step[]) =>
  waitFor(() => `the job in the retry or the dead set again (seen: ${JSON.stringify(steps)})`, async () => {
    const [retry] = await list(s, 'retries');
    const [dead] = await list(s, 'dead');
    const at = retry ? { set: 'retry' as const, entry: retry } : dead ? { set: 'dead' as const, entry: dead } : undefined;
    return at && placeOf(at) !== before ? at : undefined;
  });

async function ok(r: Promise<{ status: number; body: unknown }>) {
  const res = await r;
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** The same sequence through the control API (retry now) and the action routes (kill), the clock moved for the scheduled retry. */
async function sequence(s: TestServer, clock: ManualClock): Promise<Step[]> {
  const steps: Step[] = [];
  let at = { set: 'retry' as Step['set'], entry: { key: '', failed_at: null } as Entry };
  const step = async () => {
    at = await next(s, placeOf(at), steps);
    steps.push({ set: at.set, retry_count: at.entry.retry_count });
  };
  const retryNow = () => (clock.advance(1_000), ok(http(`${s.url}/api/v3/sim/jobs/${at.set === 'retry' ? 'retries' : 'dead'}/retry`, { json: { ids: [at.entry.key] }, token: s.adminToken })));
  await postJobs(s.url, s.adminToken, { queue: 'flaky', class: 'FlakyJob', fail: true, retry: 3 });
  await step();
  clock.advance(60_000); // its first retry comes due (15 to 44 s after the failure; the next waits 16 s at least)
  await step();
  await retryNow();
  await step();
  clock.advance(1_000);
  await ok(http(`${s.url}/api/app/connections/embedded/jobs/sets/retry/${encodeURIComponent(at.entry.key)}/kill`, { method: 'POST', token: s.adminToken }));
  await step();
  await retryNow();
  await step();
  return steps;
}

/** A job with retry: 0 dies at its first failure (Sidekiq's count 0), is retried by hand from the dead set (count -1) and dies again. */
async function deadTwice(s: TestServer, clock: ManualClock): Promise<Step[]> {
  await postJobs(s.url, s.adminToken, { queue: 'flaky', class: 'DoomedJob', fail: true, retry: 0 });
  const first = await next(s, '', []);
  clock.advance(1_000);
  await ok(http(`${s.url}/api/v3/sim/jobs/dead/retry`, { json: { ids: [first.entry.key] }, token: s.adminToken }));
  const second = await next(s, placeOf(first), []);
  return [first, second].map((at) => ({ set: at.set, retry_count: at.entry.retry_count }));
}

/** Empties the retry and dead sets between the sequences. */
async function clearSets(s: TestServer) {
  for (const set of ['retries', 'dead']) await ok(http(`${s.url}/api/v3/sim/jobs/${set}`, { method: 'DELETE', token: s.adminToken }));
}

const QUIET = { stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0 };

describe('retry_count through retry now from the retry set, kill and retry now from the dead set, as Sidekiq 6.4 counts it', () => {
  it('Sidekiq itself: a retry by hand lowers the count, so the failure after it keeps it; kill keeps it', () => {
    expect(sidekiq).toEqual([
      { set: 'retry', retry_count: 0 },
      { set: 'retry', retry_count: 1 },
      { set: 'retry', retry_count: 1 },
      { set: 'dead', retry_count: 1 },
      { set: 'retry', retry_count: 1 },
    ]);
  });

  it('Sidekiq itself: a death with count 0 retried by hand (count -1) dies again with count 0', () => {
    expect(sidekiqDead0).toEqual([
      { set: 'dead', retry_count: 0 },
      { set: 'dead', retry_count: 0 },
    ]);
  });

  describe('the embedded job system', () => {
    const servers = useServers(QUIET, 'all');
    afterAll(async () => {
      await servers.closeAll();
      await redis.client.flushdb();
    });

    it('on SQLite', async () => {
      const clock = new ManualClock();
      const s = await servers.start({}, { clock });
      expect(await sequence(s, clock)).toEqual(sidekiq);
      await clearSets(s);
      expect(await deadTwice(s, clock)).toEqual(sidekiqDead0);
    });

    it('on Redis (serve --redis)', async () => {
      const clock = new ManualClock();
      const s = await servers.start(onRedis(redis.url), { clock });
      expect(await sequence(s, clock)).toEqual(sidekiq);
      await clearSets(s);
      expect(await deadTwice(s, clock)).toEqual(sidekiqDead0);
    });

    const missing = postgresMissing();
    const pg = usePostgres();
    it.skipIf(missing !== null)(missing === null ? 'on PostgreSQL (serve --database)' : `on PostgreSQL (skipped: ${missing})`, async () => {
      const clock = new ManualClock();
      const s = await servers.start({}, { clock, database: await pg.createDatabase('retry_now') });
      expect(await sequence(s, clock)).toEqual(sidekiq);
      await clearSets(s);
      expect(await deadTwice(s, clock)).toEqual(sidekiqDead0);
    });
  });
});
