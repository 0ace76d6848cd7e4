// The job system through its APIs: backlog rises after POST /api/v3/sim/jobs and drains as the
// workers run, busy never exceeds concurrency, counters survive a restart, a failing job ends in
// the dead set after its retries, and bad input is a 4xx with a message.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startServer, tempDir, type ServerOverrides } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { http } from '../helpers/http.ts';
import { ManualClock } from '../../server/clock.ts';
import { metrics, postJobs } from './lib.ts';
import { sleep, waitFor } from '../helpers/wait.ts';

const servers = useServers();
const start = (overrides: ServerOverrides = {}, clock?: ManualClock) => servers.start(overrides, { clock });

describe('queues and workers', () => {
  it('backlog rises after POST sim/jobs, drains as workers run; busy never exceeds concurrency', async () => {
    const s = await start({ jobConcurrency: 3 });
    const posted = await postJobs(s.url, s.adminToken, { queue: 'flow', count: 20, duration_ms: 60 });
    expect(posted.enqueued).toBe(20);
    expect(posted.backlog).toBe(17); // three workers took one each at once
    const first = await metrics(s.url, s.adminToken, 'compound_metrics');
    expect(first.queues.flow.backlog).toBeGreaterThanOrEqual(11);
    expect(first.jobs.enqueued).toBe(first.queues.flow.backlog);

    let maxBusy = 0;
    const backlogs: number[] = [];
    await waitFor(
      'all 20 processed',
      async () => {
        const m = await metrics(s.url, s.adminToken, 'compound_metrics');
        const own = m.processes.find((p: { tag: string }) => p.tag === 'jobscope');
        expect(own.busy).toBeLessThanOrEqual(own.concurrency);
        maxBusy = Math.max(maxBusy, own.busy);
        backlogs.push(m.queues.flow.backlog);
        return m.jobs.processed === 20 && m.queues.flow.backlog === 0 && own.busy === 0;
      },
      10_000,
      10,
    );
    expect(maxBusy).toBe(3);
    for (let i = 1; i < backlogs.length; i++) expect(backlogs[i]).toBeLessThanOrEqual(backlogs[i - 1]!); // only drains
    const stats = await metrics(s.url, s.adminToken, 'job_stats', '/api/v3/jobqueue');
    expect(stats.jobs).toEqual({ processed: 20, failed: 0, enqueued: 0 });
  });

  it('counts, queues and dead jobs survive a restart on the same data dir', async () => {
    const dataDir = tempDir();
    const opts = { dataDir, jobBackoffUnitMs: 1, jobPollMs: 20 };
    const a = await startServer(opts);
    await postJobs(a.url, a.adminToken, { queue: 'kept', count: 5 });
    await postJobs(a.url, a.adminToken, { queue: 'broken', fail: true, retry: 0 });
    await waitFor('6 processed, 1 failed', async () => {
      const j = (await metrics(a.url, a.adminToken, 'job_stats')).jobs;
      return j.processed === 6 && j.failed === 1;
    });
    // And jobs still waiting: the pool is busy with a long one when we stop.
    await postJobs(a.url, a.adminToken, { queue: 'later', count: 12, duration_ms: 30_000 });
    await a.close({ keepData: true });

    const b = await start({ ...opts, jobConcurrency: 1 });
    const m = await metrics(b.url, b.adminToken, 'compound_metrics');
    expect(m.jobs.processed).toBe(6);
    expect(m.jobs.failed).toBe(1);
    expect(m.queues.kept).toEqual({ backlog: 0, latency: 0 }); // every queue ever pushed to stays listed
    expect(m.queues.broken).toEqual({ backlog: 0, latency: 0 });
    expect(m.queues.later.backlog).toBe(11); // 12 waiting again, one of them running on the single slot
    expect(m.jobs.enqueued).toBe(11);
    const dead = (await http(`${b.url}/api/v3/sim/jobs/dead`, { token: b.adminToken })).body;
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ queue: 'broken', class: 'SyntheticJob', retry_count: 0 });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a failing job is retried with backoff, then lands in the dead set; dead jobs can be retried and cleared', async () => {
    // Sidekiq's backoff in real seconds (the default unit) on a clock the test moves.
    // The periodic built-in jobs are off: the minutes moved would run them and add to the counters.
    const clock = new ManualClock();
    const s = await start({ stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0, monitorIntervalMs: 3_600_000 }, clock);
    await postJobs(s.url, s.adminToken, { queue: 'flaky', class: 'FlakyWorker', fail: true, retry: 3 });
    const retries = async () => (await http(`${s.url}/api/v3/sim/jobs/retries`, { token: s.adminToken })).body as { retry_count: number; run_at: string; failed_at: string }[];
    for (let n = 0; n < 3; n++) {
      const retrying = await waitFor(`retry ${n + 1} in the retry set`, async () => {
        const r = await retries();
        return r.length === 1 && r[0]!.retry_count === n ? r[0] : undefined; // Sidekiq's count: failures - 1
      });
      // While retrying it sits in the retry set, not in the backlog.
      expect((await metrics(s.url, s.adminToken, 'queue_metrics')).queues.flaky).toEqual({ backlog: 0, latency: 0 });
      // (n^4) + 15 + rand(30) * (n + 1) seconds after the failure.
      const delayMs = Date.parse(retrying.run_at) - Date.parse(retrying.failed_at);
      expect(delayMs % 1000).toBe(0);
      expect(delayMs / 1000).toBeGreaterThanOrEqual(n ** 4 + 15);
      expect(delayMs / 1000).toBeLessThanOrEqual(n ** 4 + 15 + 29 * (n + 1));
      expect(Date.parse(retrying.failed_at)).toBe(clock.now());
      clock.advance(delayMs - 1);
      expect(await retries()).toMatchObject([{ retry_count: n }]); // not due yet
      clock.advance(1000); // the next poll moves it back into its queue
    }
    const dead = await waitFor('in the dead set', async () => {
      const d = (await http(`${s.url}/api/v3/sim/jobs/dead`, { token: s.adminToken })).body as Record<string, unknown>[];
      return d.length === 1 ? d[0] : undefined;
    });
    expect(dead).toMatchObject({ queue: 'flaky', class: 'FlakyWorker', retry: 3, retry_count: 3 });
    expect(String(dead.error)).toMatch(/failed on purpose/);
    expect((await metrics(s.url, s.adminToken, 'job_stats')).jobs).toEqual({ processed: 4, failed: 4, enqueued: 0 }); // 1 run + 3 retries
    expect((await http(`${s.url}/api/v3/sim/jobs/retries`, { token: s.adminToken })).body).toEqual([]);

    // Retrying from the dead set runs it once more (its retries are used up, so it dies again).
    const retried = await http(`${s.url}/api/v3/sim/jobs/dead/retry`, { method: 'POST', token: s.adminToken });
    expect(retried.body).toEqual({ count: 1 });
    await waitFor('failed again', async () => (await metrics(s.url, s.adminToken, 'job_stats')).jobs.failed === 5);
    await waitFor('dead again', async () => (await http(`${s.url}/api/v3/sim/jobs/dead`, { token: s.adminToken })).body.length === 1);
    const cleared = await http(`${s.url}/api/v3/sim/jobs/dead`, { method: 'DELETE', token: s.adminToken });
    expect(cleared.body).toEqual({ count: 1 });
    expect((await http(`${s.url}/api/v3/sim/jobs/dead`, { token: s.adminToken })).body).toEqual([]);
  });

  it('the dead set is bounded by jobDeadMax: the oldest deaths go first', async () => {
    const s = await start({ jobDeadMax: 2, jobConcurrency: 1 });
    for (const cls of ['First', 'Second', 'Third', 'Fourth']) {
      await postJobs(s.url, s.adminToken, { queue: 'doomed', class: cls, fail: true, retry: 0 });
      await waitFor(`${cls} dead`, async () =>
        ((await http(`${s.url}/api/v3/sim/jobs/dead`, { token: s.adminToken })).body as { class: string }[]).some((d) => d.class === cls),
      );
    }
    const dead = (await http(`${s.url}/api/v3/sim/jobs/dead`, { token: s.adminToken })).body as { class: string }[];
    expect(dead.map((d) => d.class)).toEqual(['Fourth', 'Third']);
  });

  it('retry: false drops a failing job without a dead entry', async () => {
    const s = await start();
    await postJobs(s.url, s.adminToken, { queue: 'dropme', fail: true, retry: false });
    await waitFor('failed', async () => (await metrics(s.url, s.adminToken, 'job_stats')).jobs.failed === 1);
    await sleep(50);
    expect((await http(`${s.url}/api/v3/sim/jobs/dead`, { token: s.adminToken })).body).toEqual([]);
    expect((await http(`${s.url}/api/v3/sim/jobs/retries`, { token: s.adminToken })).body).toEqual([]);
  });

  it('bad input is a 4xx with a message, and needs the admin', async () => {
    const s = await start();
    const post = (json: unknown, token = s.adminToken) => http(`${s.url}/api/v3/sim/jobs`, { json, token });
    for (const body of [{}, { queue: '' }, { queue: '../etc' }, { queue: 'q', count: 0 }, { queue: 'q', count: 10001 }, { queue: 'q', duration_ms: -1 }, { queue: 'q', retry: 26 }, [1], 'text']) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(typeof r.body.message).toBe('string');
    }
    expect((await post({ queue: 'q' }, 'wrong')).status).toBe(401);
    expect((await http(`${s.url}/api/v3/sim/load`, { method: 'PUT', json: { processes: 0 }, token: s.adminToken })).status).toBe(400);
    expect((await http(`${s.url}/api/v3/sim/load`, { method: 'PUT', json: { failure_rate: 2 }, token: s.adminToken })).status).toBe(400);
    expect((await http(`${s.url}/api/v3/sim/load`, { token: s.adminToken })).body.running).toBe(false);
  });
});

describe('demo load generator', () => {
  it('adds simulated processes and queues that fill and drain; stopping leaves the real ones', async () => {
    const s = await start();
    const started = await http(`${s.url}/api/v3/sim/load`, {
      method: 'PUT',
      token: s.adminToken,
      json: { processes: 3, concurrency: 2, queues: 4, rate: 150, wave: 0, duration_ms: 40, failure_rate: 0.2, burst_every_s: 1, burst_size: 60, seed: 7 },
    });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ running: true, settings: { processes: 3, queues: 4 } });
    const demoQueues: string[] = started.body.queues;
    expect(demoQueues).toHaveLength(4);

    // A durable queue of a demo name is refused while the demo owns it.
    expect((await http(`${s.url}/api/v3/sim/jobs`, { json: { queue: demoQueues[0] }, token: s.adminToken })).status).toBe(409);

    let sawBacklog = false;
    let sawSaturated = false;
    await waitFor(
      'demo jobs processed and failed',
      async () => {
        const m = await metrics(s.url, s.adminToken, 'compound_metrics');
        const sim = m.processes.filter((p: { labels: string[] }) => p.labels.includes('simulated'));
        expect(sim).toHaveLength(3);
        for (const p of sim) {
          expect(p.busy).toBeLessThanOrEqual(p.concurrency);
          expect(p.concurrency).toBe(2);
          if (p.busy === p.concurrency) sawSaturated = true;
        }
        for (const q of demoQueues) expect(m.queues[q]).toBeDefined();
        if (demoQueues.some((q) => m.queues[q].backlog > 0)) sawBacklog = true;
        return sawBacklog && sawSaturated && m.jobs.processed >= 100 && m.jobs.failed > 0;
      },
      10_000,
      20,
    );

    // Changing the shape re-creates the simulated processes.
    const changed = await http(`${s.url}/api/v3/sim/load`, { method: 'PUT', token: s.adminToken, json: { processes: 5 } });
    expect(changed.body.settings.processes).toBe(5);
    expect((await metrics(s.url, s.adminToken, 'process_metrics')).processes.filter((p: { labels: string[] }) => p.labels.includes('simulated'))).toHaveLength(5);

    const stopped = await http(`${s.url}/api/v3/sim/load`, { method: 'DELETE', token: s.adminToken });
    expect(stopped.body.running).toBe(false);
    const after = await metrics(s.url, s.adminToken, 'compound_metrics');
    expect(after.processes).toHaveLength(1);
    expect(after.processes[0].tag).toBe('jobscope');
    for (const q of demoQueues) expect(after.queues[q]).toBeUndefined();
    expect(Object.keys(after.queues)).toEqual(expect.arrayContaining(['stuck_builds', 'artifact_expiry', 'runner_contact', 'archive_listing']));
    expect(after.jobs.processed).toBeGreaterThanOrEqual(100); // counters keep what the demo did
  });

  it('--demo starts it at boot', async () => {
    const s = await start({ demo: true });
    const m = await waitFor('simulated processes busy', async () => {
      const c = await metrics(s.url, s.adminToken, 'compound_metrics');
      return c.jobs.processed > 0 ? c : undefined;
    });
    expect(m.processes.filter((p: { labels: string[] }) => p.labels.includes('simulated')).length).toBeGreaterThan(0);
    expect((await http(`${s.url}/api/v3/sim/load`, { token: s.adminToken })).body.running).toBe(true);
  });
});
