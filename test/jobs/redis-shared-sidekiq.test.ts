// `serve --redis URL` on a Redis shared with a real, running Sidekiq 6.4: Sidekiq's Busy
// view (Sidekiq::Workers) lists Jobscope's running jobs as it lists its own, and Jobscope's metrics
// API reports the whole Redis (queues only Sidekiq serves, Sidekiq's process) exactly as GitLab's
// endpoint, a thin view over Sidekiq's API, would. Real redis-server, real `sidekiq` process (the
// fixture app in test/fixtures/sidekiq), Sidekiq's API in Ruby as the oracle.
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sidekiqConfig, sidekiqRuby, sidekiqView, startSidekiqApp, warmOracle, type OracleView } from '../helpers/sidekiq-oracle.ts';
import type { TestServer } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import type { CompoundMetrics, JobStats, ProcessMetrics, QueueMetrics } from '../../contract/metrics.ts';
import { metrics, onRedis, postJobs } from './lib.ts';
import { waitFor } from '../helpers/wait.ts';

let redis: TestRedis;
let raw: Redis;
beforeAll(async () => {
  warmOracle();
  redis = await startRedis();
  raw = new Redis(redis.url);
});
afterAll(async () => {
  raw?.disconnect();
  await redis?.stop();
});

const servers = useServers(() => onRedis(redis.url));
const start = servers.start;
const sidekiqs: ChildProcess[] = [];
afterEach(async () => {
  // SIGKILL: a TERM would wait up to 25 s for the fixture's SleepJob.
  for (const w of sidekiqs.splice(0)) {
    if (w.exitCode === null && w.signalCode === null) {
      const exited = new Promise((r) => w.once('exit', r));
      w.kill('SIGKILL');
      await exited;
    }
  }
  await servers.closeAll();
  await raw.flushdb();
});

/** The fixture Sidekiq app working `queue` with `concurrency` threads, tag "ruby_app". */
function startSidekiq(queue: string, concurrency: number): ChildProcess {
  const w = startSidekiqApp(redis.url, ['-C', sidekiqConfig, '-q', queue, '-c', String(concurrency), '-g', 'ruby_app']);
  sidekiqs.push(w);
  return w;
}

/**
 * A job kind of this test's server that runs until `release(n)` (or the server stops): a job in
 * flight for as long as the test needs, whatever the machine's load.
 */
function gatedKind(s: TestServer): { release(n: number): void } {
  const gates = new Map<number, () => void>();
  s.server.ctx.jobs.register('gate', {
    class: 'GateJob',
    queue: 'gated',
    retry: false,
    declare: false,
    perform: (args, { signal }) =>
      new Promise<void>((resolve, reject) => {
        gates.set(Number(args.n), resolve);
        signal.addEventListener('abort', () => reject(new Error('the server is stopping')), { once: true });
      }),
  });
  return { release: (n) => gates.get(n)!() };
}

describe('Sidekiq’s Busy view of a Jobscope process (<identity>:workers)', () => {
  it('Sidekiq::Workers lists a running Jobscope job with its queue, jid, class and run_at, ProcessSet busy = 1; gone once it ends and once the server leaves', async () => {
    // TTL 15 s: the hash outlives the server's close by far. A beat every 0.1 s (redisBeatMs) shows
    // each change in the Busy view at once instead of at Sidekiq's 5 s beat.
    const s = await start({ jobConcurrency: 2, redisProcessTtlS: 15 });
    const gate = gatedKind(s);
    const before = Math.floor(Date.now() / 1000);
    const [job] = await s.server.ctx.jobs.enqueue('gate', { n: 1 });
    await waitFor('Sidekiq::Workers to list the job', async () => {
      const o = await sidekiqView(redis.url);
      return o.workers.length > 0 ? o : undefined;
    }, 20_000, 50);
    // Read again: Sidekiq's API reads ProcessSet and then Workers, not at one instant, so the view that
    // first listed the job may hold `busy` from the beat before it (a beat every 0.1 s makes that
    // likely). Every key of this view is read after the beat that listed the job, while it still runs.
    const v = await sidekiqView(redis.url);
    const seenBy = Date.now() / 1000;
    expect(v.processes).toHaveLength(1);
    const identity = v.processes[0]!.identity;
    expect(v.workers).toEqual([{ process: identity, thread: expect.stringMatching(/^[0-9a-z]+$/), queue: 'gated', run_at: expect.any(Number), jid: job!.jid, class: 'GateJob', args: [{ n: 1 }] }]);
    expect(Number.isInteger(v.workers[0]!.run_at)).toBe(true);
    expect(v.workers[0]!.run_at).toBeGreaterThanOrEqual(before);
    expect(v.workers[0]!.run_at).toBeLessThanOrEqual(seenBy);
    expect(v.processes[0]!.busy).toBe(1);
    expect(v.workers_size).toBe(1);

    // Sidekiq 6.4's own layout: field = thread id, value {queue, payload, run_at} with the payload
    // as the job's JSON string exactly as fetched (the member of the working list), TTL as the process's.
    const workersKey = `${identity}:workers`;
    const hash = await raw.hgetall(workersKey);
    expect(Object.keys(hash)).toEqual([v.workers[0]!.thread]);
    const entry = JSON.parse(Object.values(hash)[0]!) as Record<string, unknown>;
    expect(Object.keys(entry)).toEqual(['queue', 'payload', 'run_at']);
    expect(entry.payload).toBe((await raw.lrange(`working:${identity}`, 0, -1))[0]);
    expect(JSON.parse(entry.payload as string)).toMatchObject({ class: 'GateJob', jid: job!.jid, queue: 'gated' });
    const ttl = await raw.ttl(workersKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(15);

    gate.release(1);
    await waitFor('the job gone from Sidekiq::Workers, busy 0', async () => {
      const o = await sidekiqView(redis.url);
      return o.workers.length === 0 && o.processes[0]?.busy === 0 && o.stats.processed === 1;
    }, 20_000, 50);

    // Another job in flight when the server stops: leave() removes the hash at once, not at its TTL.
    await s.server.ctx.jobs.enqueue('gate', { n: 2 });
    await waitFor('the second job listed', async () => (await sidekiqView(redis.url)).workers.length === 1, 20_000, 50);
    expect(await raw.exists(workersKey)).toBe(1);
    await servers.close(s);
    expect(await raw.exists(workersKey)).toBe(0);
    expect(await raw.sismember('processes', identity)).toBe(0);
    expect((await sidekiqView(redis.url)).workers).toEqual([]);
  }, 90_000);
});

/** GitLab's process_metrics entries (lib/api/sidekiq_metrics.rb over Sidekiq::ProcessSet). */
const gitlabProcesses = (o: OracleView) =>
  o.processes.map((p) => ({ hostname: p.hostname, pid: p.pid, tag: p.tag, started_at: p.started_at_gitlab, queues: p.queues, labels: p.labels, concurrency: p.concurrency, busy: p.busy }));

/**
 * GitLab's queue_metrics over Sidekiq::Queue.all: backlog = size, latency = latency.to_i. Jobscope
 * answered between t0 and t1 (epoch s), from the same oldest enqueued_at as Sidekiq's.
 */
function expectQueuesAsGitlab(ours: QueueMetrics['queues'], o: OracleView, t0: number, t1: number): void {
  expect(Object.keys(ours)).toEqual(o.queues.map((q) => q.name));
  for (const q of o.queues) {
    expect(ours[q.name]!.backlog, q.name).toBe(q.size);
    if (q.size === 0) expect(ours[q.name]!.latency, q.name).toBe(0);
    else {
      // The tail's enqueued_at lies within [latency_from, latency_to] - latency (Sidekiq reads its own
      // Time.now inside Queue#latency, not the oracle's `now`).
      const oldestEarliest = q.latency_from - q.latency;
      const oldestLatest = q.latency_to - q.latency;
      expect(ours[q.name]!.latency, q.name).toBeGreaterThanOrEqual(Math.trunc(t0 - oldestLatest));
      expect(ours[q.name]!.latency, q.name).toBeLessThanOrEqual(Math.trunc(t1 - oldestEarliest));
    }
  }
}

describe('the metrics API over a Redis shared with a running Sidekiq', () => {
  it('process_metrics’ started_at is GitLab’s to the millisecond: Time.at(float) truncated, not float * 1000 rounded', async () => {
    const s = await start();
    // Processes as a heartbeat writes them, started at whole milliseconds (as Jobscope writes its
    // own): about half of such floats lie just below their millisecond in binary.
    await sidekiqRuby(
      redis.url,
      `10.times do |i|
         id = "host-#{i}:#{100 + i}:abcdef"
         info = { "hostname" => "host-#{i}", "started_at" => (1764094400000 + i) / 1000.0, "pid" => 100 + i, "tag" => "t", "concurrency" => 1, "queues" => ["q"], "labels" => [], "identity" => id }
         Sidekiq.redis { |c| c.sadd("processes", id); c.hset(id, "info", Sidekiq.dump_json(info), "busy", 0, "beat", Time.now.to_f, "quiet", "false"); c.expire(id, 60) }
       end`,
    );
    const ours = (await metrics(s.url, s.adminToken, 'process_metrics', '/api/v3/sidekiq')) as ProcessMetrics;
    const o = await sidekiqView(redis.url);
    expect(o.processes).toHaveLength(11);
    expect(ours.processes).toEqual(gitlabProcesses(o));
    // 1764094400.001 is 1764094400.000999… in binary: GitLab printed .000.
    expect(o.processes.find((p) => p.pid === 101)!.started_at_gitlab).toMatch(/:20\.000[+-]/);
  }, 60_000);

  it('reports the whole Redis as GitLab would (Queue.all, ProcessSet, Stats), both processes listed; jobs of a queue only Sidekiq serves are run by Sidekiq, never taken by Jobscope', async () => {
    const s = await start({ jobConcurrency: 1 });
    // Jobscope's side: 2 done, 1 dead, then one long job busy and two waiting behind it.
    await postJobs(s.url, s.adminToken, { queue: 'js_quick', count: 2 });
    await postJobs(s.url, s.adminToken, { queue: 'js_doomed', count: 1, fail: true, retry: 0 });
    await waitFor('Jobscope’s first jobs done', async () => (await sidekiqView(redis.url)).dead_size === 1 && (await raw.get('stat:processed')) === '3', 20_000, 50);
    await postJobs(s.url, s.adminToken, { queue: 'js_slow', count: 3, duration_ms: 600_000 });

    // The Sidekiq app's side, in queues Jobscope does not serve: in rb_work 2 done, 1 dead, one
    // recorded (who ran it), then a long job busy and two waiting behind it; rb_mailers has no worker.
    const jids = await sidekiqRuby(
      redis.url,
      `2.times { |i| Sidekiq::Client.push("class" => "NoopJob", "queue" => "rb_work", "args" => [i]) }
       Sidekiq::Client.push("class" => "DieJob", "queue" => "rb_work", "retry" => 0, "args" => [])
       rec = Sidekiq::Client.push("class" => "RecordJob", "queue" => "rb_work", "args" => [])
       Sidekiq::Client.push("class" => "SleepJob", "queue" => "rb_work", "args" => [600])
       2.times { |i| Sidekiq::Client.push("class" => "NoopJob", "queue" => "rb_work", "args" => [i]) }
       Sidekiq::Client.push("class" => "NoopJob", "queue" => "rb_mailers", "args" => [])
       puts rec`,
    );
    const recordJid = jids.trim();
    const worker = startSidekiq('rb_work', 1);

    // A stable moment: nothing ends for 600 s, both heartbeats carry their counts and busy slots.
    const settled = (o: OracleView) => {
      const rb = o.processes.find((p) => p.pid === worker.pid);
      const js = o.processes.find((p) => p.pid === process.pid);
      const size = (name: string) => o.queues.find((q) => q.name === name)?.size;
      return o.processes.length === 2 && rb?.busy === 1 && js?.busy === 1 && size('rb_work') === 2 && size('js_slow') === 2 && o.stats.processed === 7 && o.stats.failed === 2;
    };
    await waitFor('both processes busy, Sidekiq’s counts flushed', async () => settled(await sidekiqView(redis.url)), 60_000, 50);

    const t0 = Date.now() / 1000;
    const compound = (await metrics(s.url, s.adminToken, 'compound_metrics', '/api/v3/sidekiq')) as CompoundMetrics;
    const queueMetrics = (await metrics(s.url, s.adminToken, 'queue_metrics', '/api/v3/sidekiq')) as QueueMetrics;
    const processMetrics = (await metrics(s.url, s.adminToken, 'process_metrics', '/api/v3/sidekiq')) as ProcessMetrics;
    const jobStats = (await metrics(s.url, s.adminToken, 'job_stats', '/api/v3/sidekiq')) as JobStats;
    const t1 = Date.now() / 1000;
    const o = await sidekiqView(redis.url);
    expect(settled(o), 'nothing moved during the reads').toBe(true);

    // Field by field, each endpoint against GitLab's answer from Sidekiq's own API.
    for (const queues of [compound.queues, queueMetrics.queues]) expectQueuesAsGitlab(queues, o, t0, t1);
    expect(compound.processes).toEqual(gitlabProcesses(o));
    expect(processMetrics.processes).toEqual(gitlabProcesses(o));
    const stats = { processed: o.stats.processed, failed: o.stats.failed, enqueued: o.stats.enqueued };
    expect(compound.jobs).toEqual(stats);
    expect(jobStats.jobs).toEqual(stats);

    // What the test set up, so answers empty on both sides could not pass.
    expect(stats).toEqual({ processed: 7, failed: 2, enqueued: 5 });
    expect(Object.keys(compound.queues)).toEqual(expect.arrayContaining(['js_quick', 'js_doomed', 'js_slow', 'rb_work', 'rb_mailers']));
    expect(compound.queues.rb_mailers!.backlog).toBe(1);
    const rb = compound.processes.find((p) => p.pid === worker.pid)!;
    expect(rb).toMatchObject({ tag: 'ruby_app', labels: ['canary', 'blue'], queues: ['rb_work'], concurrency: 1, busy: 1 });
    const js = compound.processes.find((p) => p.pid === process.pid)!;
    expect(js).toMatchObject({ tag: 'jobscope', concurrency: 1, busy: 1 });
    expect(js.queues).toContain('js_slow');
    expect(js.queues).not.toContain('rb_work');
    expect(js.queues).not.toContain('rb_mailers');

    // rb_work's jobs: RecordJob ran in Sidekiq; the two behind the long job waited while Jobscope
    // polled every 50 ms, and none is in a Jobscope working list.
    expect(await raw.lrange('test:ran', 0, -1)).toEqual([`${recordJid} ${worker.pid}`]);
    expect(await raw.llen('queue:rb_work')).toBe(2);
    const working = await raw.keys('working:*');
    const taken = (await Promise.all(working.map((k) => raw.lrange(k, 0, -1)))).flat().map((p) => (JSON.parse(p) as { queue: string }).queue);
    expect(taken).toEqual(['js_slow']);
  }, 120_000);
});
