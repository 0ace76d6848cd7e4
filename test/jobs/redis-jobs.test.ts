// `serve --redis URL`: the job system on a real redis-server in Sidekiq 6.4's layout, checked against
// the real Sidekiq (Debian's ruby-sidekiq) as the oracle: Sidekiq's API reports what Jobscope's
// metrics API reports; a job pushed by Sidekiq's client runs in Jobscope; a failing one retries with
// Sidekiq's backoff and ends in the dead set where Sidekiq's API finds it; two servers on one Redis
// each list their process and run every job once; kill -9 of a server mid-job loses no job.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sidekiqRuby, sidekiqView, warmOracle } from '../helpers/sidekiq-oracle.ts';
import { tempDir, type TestServer } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { http } from '../helpers/http.ts';
import { metrics, onRedis, postJobs, retryNowThenDue, spawnServe } from './lib.ts';
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
afterEach(async () => {
  await servers.closeAll();
  await sidekiqRuby(redis.url, 'Sidekiq.redis { |c| c.flushdb }');
});

type Compound = {
  queues: Record<string, { backlog: number; latency: number }>;
  processes: { hostname: string; pid: number; tag: string; concurrency: number; busy: number; queues: string[]; labels: string[]; started_at: string }[];
  jobs: { processed: number; failed: number; enqueued: number };
};
const compound = async (s: TestServer) => (await metrics(s.url, s.adminToken, 'compound_metrics')) as Compound;
const sim = (s: TestServer, path: string, init: { method?: string; json?: unknown } = {}) => http(`${s.url}/api/v3/sim${path}`, { ...init, token: s.adminToken });

describe('serve --redis: the job system in Sidekiq’s layout', () => {
  it('is a saved setting (redis) shown without its password; the server on it lists its process in Redis', async () => {
    const s = await start();
    // Nothing listens on 6390: saving it for a later start needs the confirmation.
    const put = await http(`${s.url}/api/app/settings`, { method: 'PUT', json: { values: { redis: 'redis://:s3cret-pw@127.0.0.1:6390/2' }, confirm_unreachable: true }, token: s.adminToken });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const row = (put.body as { settings: { name: string; saved: unknown; effective: unknown; env: string }[] }).settings.find((x) => x.name === 'redis')!;
    expect(row).toMatchObject({ saved: 'redis://:***@127.0.0.1:6390/2', effective: redis.url, env: 'JOBSCOPE_REDIS_URL' });
    expect(JSON.stringify(put.body)).not.toContain('s3cret-pw');
    const v = await sidekiqView(redis.url);
    expect(v.processes.map((p) => p.pid)).toEqual([process.pid]);
  });


  it('Sidekiq’s API (Queue.all, ProcessSet, Stats, RetrySet, DeadSet) reports what Jobscope’s metrics API reports', async () => {
    const s = await start({ jobConcurrency: 2 });
    await postJobs(s.url, s.adminToken, { queue: 'quick', count: 4 });
    await postJobs(s.url, s.adminToken, { queue: 'doomed', count: 2, fail: true, retry: 0, class: 'DoomedJob' });
    await postJobs(s.url, s.adminToken, { queue: 'flaky', count: 1, fail: true, retry: 3, class: 'FlakyJob' });
    await waitFor('6 processed, 3 failed', async () => {
      const v = await sidekiqView(redis.url);
      return v.stats.processed === 7 && v.stats.failed === 3 && v.dead_size === 2 && v.retry_size === 1;
    }, 20_000, 50);
    // Two long jobs fill both slots, three wait: a stable moment to compare. Waited for in the
    // heartbeat that lists the two slow jobs among its workers: `busy` alone was also 2 in a beat
    // from the quick jobs' turn, and a run whose next beats came late (the suite's load; this test
    // took 470 ms) compared that beat, which predates the flaky and slow queues, with a newer one.
    await postJobs(s.url, s.adminToken, { queue: 'slow', count: 5, duration_ms: 60_000 });
    await waitFor('both slots busy with slow jobs', async () => {
      const v = await sidekiqView(redis.url);
      return v.processes[0]?.busy === 2 && v.workers.filter((w) => w.queue === 'slow').length === 2;
    }, 10_000, 50);

    const t0 = Date.now() / 1000;
    const mine = await compound(s);
    const t1 = Date.now() / 1000;
    const theirs = await sidekiqView(redis.url);
    expect(theirs.stats).toMatchObject({ processed: 7, failed: 3, enqueued: 3, retry_size: 1, dead_size: 2, processes_size: 1 });
    expect(mine.jobs).toEqual({ processed: theirs.stats.processed, failed: theirs.stats.failed, enqueued: theirs.stats.enqueued });
    expect(Object.keys(mine.queues).sort()).toEqual(theirs.queues.map((q) => q.name).sort());
    for (const q of theirs.queues) {
      expect(mine.queues[q.name]!.backlog).toBe(q.size);
      // Sidekiq measured at its `now`, Jobscope between t0 and t1: the same oldest enqueued_at.
      const oldest = theirs.now - q.latency;
      const lat = mine.queues[q.name]!.latency;
      if (q.size === 0) expect(lat).toBe(0);
      else {
        expect(lat).toBeGreaterThanOrEqual(Math.trunc(t0 - oldest));
        expect(lat).toBeLessThanOrEqual(Math.trunc(t1 - oldest));
      }
    }
    expect(mine.queues.slow!.backlog).toBe(3);
    expect(mine.processes).toHaveLength(1);
    const [p] = theirs.processes;
    expect(mine.processes[0]).toMatchObject({ hostname: p!.hostname, pid: p!.pid, tag: p!.tag, concurrency: 2, busy: 2, labels: p!.labels });
    expect([...mine.processes[0]!.queues].sort()).toEqual([...p!.queues].sort());
    expect(p!.pid).toBe(process.pid);
    expect(Math.abs(Date.parse(mine.processes[0]!.started_at) / 1000 - p!.started_at)).toBeLessThan(1);
    // The control API's retry and dead sets are Sidekiq's.
    expect(((await sim(s, '/jobs/retries')).body as unknown[]).length).toBe(theirs.retry_size);
    expect(((await sim(s, '/jobs/dead')).body as { class: string }[]).map((j) => j.class)).toEqual(['DoomedJob', 'DoomedJob']);
    const dayKey = new Date().toISOString().slice(0, 10);
    expect(theirs.history.processed[dayKey]).toBe(7);
    expect(theirs.history.failed[dayKey]).toBe(3);
  }, 60_000);

  it('a job pushed by Sidekiq::Client runs in Jobscope; a failing one retries with Sidekiq’s backoff and ends in the dead set', async () => {
    const s = await start();
    await postJobs(s.url, s.adminToken, { queue: 'from-ruby', count: 1 }); // Jobscope serves the queue from now on
    await waitFor('the first job done', async () => (await sidekiqView(redis.url)).stats.processed === 1, 10_000, 50);
    await sidekiqRuby(redis.url, 'Sidekiq::Client.push("class" => "SyntheticJob", "queue" => "from-ruby", "args" => [{"duration_ms" => 0}])');
    await waitFor('the pushed job processed', async () => {
      const v = await sidekiqView(redis.url);
      return v.stats.processed === 2 && v.queues.find((q) => q.name === 'from-ruby')?.size === 0;
    }, 10_000, 50);

    const before = Date.now() / 1000;
    await sidekiqRuby(redis.url, 'Sidekiq::Client.push("class" => "SyntheticJob", "queue" => "from-ruby", "args" => [{"fail" => true}], "retry" => 1)');
    const retry = await waitFor('the failing job in the retry set', async () => {
      const out = await sidekiqRuby(redis.url, 'e = Sidekiq::RetrySet.new.first; puts(e ? JSON.generate(e.item.merge("at" => e.at.to_f)) : "")');
      return out.trim() ? (JSON.parse(out) as Record<string, unknown>) : undefined;
    }, 10_000, 50);
    expect(retry).toMatchObject({ class: 'SyntheticJob', queue: 'from-ruby', retry: 1, retry_count: 0, error_class: 'Error', error_message: 'SyntheticJob failed on purpose (fail: true)' });
    // Sidekiq's delay_for with count 0: 0**4 + 15 + rand(10) * 1 seconds after the failure.
    const delay = (retry.at as number) - (retry.failed_at as number);
    expect(delay).toBeGreaterThanOrEqual(15 - 0.01);
    expect(delay).toBeLessThan(25);
    expect(retry.failed_at as number).toBeGreaterThanOrEqual(before - 1);

    // Retry now (Sidekiq Web's button): it fails and keeps Sidekiq's count 0; its last retry, come due
    // at once instead of in 15 s, fails and it dies.
    await retryNowThenDue(redis.url, async () => {
      expect((await sim(s, '/jobs/retries/retry', { method: 'POST', json: {} })).status).toBe(200);
    }, 0);
    const dead = await waitFor('the job in Sidekiq’s dead set', async () => {
      const out = await sidekiqRuby(redis.url, 'e = Sidekiq::DeadSet.new.first; puts(e ? JSON.generate(e.item) : "")');
      return out.trim() ? (JSON.parse(out) as Record<string, unknown>) : undefined;
    }, 10_000, 50);
    expect(dead).toMatchObject({ class: 'SyntheticJob', jid: retry.jid, retry_count: 1, error_class: 'Error', failed_at: retry.failed_at });
    expect(typeof dead.retried_at).toBe('number');
    const v = await sidekiqView(redis.url);
    expect(v).toMatchObject({ retry_size: 0, dead_size: 1 });
    expect(v.stats).toMatchObject({ processed: 5, failed: 3 }); // the run retried by hand counts too
  }, 60_000);

  it('never forgets a queue as idle: this server does not see the jobs waiting in Redis', async () => {
    const s = await start({ jobConcurrency: 1, queueForgetIdleMinutes: 1 });
    await postJobs(s.url, s.adminToken, { queue: 'busy-slot', count: 1, duration_ms: 60_000 });
    await postJobs(s.url, s.adminToken, { queue: 'waiting', count: 2 });
    await waitFor('the slot busy', async () => (await sidekiqView(redis.url)).processes[0]?.busy === 1, 10_000, 50);
    expect(s.server.ctx.jobs.forgetIdleQueues(Date.now() + 365 * 24 * 3_600_000)).toEqual([]);
    const v = await sidekiqView(redis.url);
    expect(v.queues.find((q) => q.name === 'waiting')?.size).toBe(2);
  }, 30_000);

  it('two servers on one Redis each list their process and run every job once', async () => {
    const a = await start({ jobConcurrency: 3 });
    const b = await start({ jobConcurrency: 3 });
    await waitFor('two processes', async () => (await sidekiqView(redis.url)).processes.length === 2, 10_000, 50);
    const procs = (await sidekiqView(redis.url)).processes;
    expect(new Set(procs.map((p) => p.identity)).size).toBe(2);
    expect((await compound(a)).processes).toHaveLength(2);
    expect((await compound(b)).processes).toHaveLength(2);
    for (let i = 0; i < 10; i++) {
      const s = i % 2 ? a : b;
      await postJobs(s.url, s.adminToken, { queue: 'shared', count: 20, duration_ms: 5 });
    }
    await waitFor('200 processed', async () => {
      const v = await sidekiqView(redis.url);
      return v.stats.processed >= 200 && v.stats.enqueued === 0 && v.processes.every((p) => p.busy === 0) ? v : undefined;
    }, 30_000, 50);
    // A job run twice would count twice; give a straggler time to show up.
    await new Promise((r) => setTimeout(r, 500));
    expect((await sidekiqView(redis.url)).stats.processed).toBe(200);
    const working = await sidekiqRuby(redis.url, 'puts Sidekiq.redis { |c| c.keys("working:*").sum { |k| c.llen(k) } }');
    expect(Number(working)).toBe(0);
  }, 60_000);

  it('kill -9 of a server mid-job loses no job: another server runs it again once the dead one’s heartbeat expires', async () => {
    const dir = tempDir();
    const child = await spawnServe(dir, 'kill-test-token-0123456789', ['--redis', redis.url, '--redis-process-ttl-s', '3', '--redis-beat-ms', '100', '--job-poll-ms', '50']);
    try {
      const r = await http(`${child.url}/api/v3/sim/jobs`, { json: { queue: 'precious', count: 1, duration_ms: 4000 }, token: 'kill-test-token-0123456789' });
      expect(r.status).toBe(202);
      await waitFor('the job running in the child', async () => (await sidekiqView(redis.url)).processes[0]?.busy === 1, 10_000, 50);
      child.proc.kill('SIGKILL');
      await child.exited;
    } finally {
      child.proc.kill('SIGKILL');
    }
    expect((await sidekiqView(redis.url)).stats.enqueued).toBe(0); // the job is in the dead process's working list, not waiting
    expect((await sidekiqView(redis.url)).stats.processed).toBe(0);
    await start({ redisProcessTtlS: 3 });
    // The survivor puts it back once the dead process's hash expired (3 s) and runs it to its end.
    await waitFor('the job run again to its end by the new server', async () => {
      const v = await sidekiqView(redis.url);
      return v.stats.processed === 1 && v.stats.enqueued === 0 && v.processes.length === 1 && v.processes[0]!.pid === process.pid;
    }, 30_000, 50);
    const working = await sidekiqRuby(redis.url, 'puts Sidekiq.redis { |c| c.keys("working:*").sum { |k| c.llen(k) } }');
    expect(Number(working)).toBe(0);
    expect((await sidekiqView(redis.url)).stats).toMatchObject({ processed: 1, failed: 0 });
  }, 60_000);
});
