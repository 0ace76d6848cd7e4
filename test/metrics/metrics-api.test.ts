// The job-queue metrics API: the four endpoints on all three prefixes, GitLab's shapes and types,
// its auth answers, compound = the three merged, enqueued = Σ backlog, and the in-process function.
// On both stores (test/api/backends.ts): with a database the user tokens are looked up there and the
// job system is on its job tables. There, as with Sidekiq (whose numbers GitLab's API reads), a
// process's busy slots and queues are its heartbeat's, written every --redis-beat-ms; queues and
// counters are the tables', not this process's memory, so the in-process read is the job system's
// read() (what the dashboard's embedded connection calls), which on SQLite is the memory itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { createProject, registerRunner } from '../helpers/fixtures.ts';
import { CompoundMetrics, JobStats, ProcessMetrics, QueueMetrics } from '../../contract/metrics.ts';
import { compoundMetrics, compoundOf } from '../../server/metrics-api/compound.ts';
import { compoundJson } from '../../server/metrics-api/json-writer.ts';
import { ManualClock } from '../../server/clock.ts';
import { postJobs } from '../jobs/lib.ts';
import { eachBackend } from '../api/backends.ts';

const PREFIXES = ['/api/v3/sidekiq', '/api/v3/jobqueue', '/api/v4/sidekiq'];
const SCHEMAS = { queue_metrics: QueueMetrics, process_metrics: ProcessMetrics, job_stats: JobStats, compound_metrics: CompoundMetrics } as const;
const ENDPOINTS = Object.keys(SCHEMAS) as (keyof typeof SCHEMAS)[];
const STARTED_AT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$/;

eachBackend((startServer) => {
  let s: TestServer;
  let userToken: string;
  let adminUserToken: string;
  let runnerToken: string;
  let projectTokens: string[];
  // Latency is read on the job system's clock: the test moves it instead of waiting seconds.
  const clock = new ManualClock();

  beforeAll(async () => {
    // A heartbeat every 50 ms (PostgreSQL's job backend; SQLite's has none) instead of Sidekiq's 5 s.
    s = await startServer({ jobConcurrency: 1, redisBeatMs: 50 }, { clock });
    const mk = async (username: string, admin: boolean) =>
      (await http(`${s.url}/api/v3/sim/users`, { json: { username, admin }, token: s.adminToken })).body.private_token as string;
    userToken = await mk('plain', false);
    adminUserToken = await mk('boss', true);
    runnerToken = (await registerRunner(s)).token;
    const project = await createProject(s, 'p');
    projectTokens = [project.runners_token, project.ci_token];
    // One job holds the only worker slot; three more wait behind it, so every number is non-trivial.
    await postJobs(s.url, s.adminToken, { queue: 'hold', duration_ms: 20_000 });
    await postJobs(s.url, s.adminToken, { queue: 'waiting', count: 3 });
    await postJobs(s.url, s.adminToken, { queue: 'other', count: 2 });
    await heartbeatSince();
  });

  /**
   * Until this process's entry shows the setup's jobs: at once from memory (SQLite); with a database
   * after the first heartbeat since the hold job started. Heartbeats run on the job system's clock, so
   * the test moves it a beat (50 ms, well under the second latencies count) instead of waiting.
   */
  async function heartbeatSince() {
    for (let i = 0; i < 200; i++) {
      const r = await http(`${s.url}/api/v4/sidekiq/process_metrics`, { token: s.adminToken });
      const own = (r.body as { processes: { tag: string; busy: number; queues: string[] }[] }).processes.find((p) => p.tag === 'jobscope');
      if (own?.busy === 1 && ['hold', 'waiting', 'other'].every((q) => own.queues.includes(q))) return;
      // A beat writes in the background: read a few times before moving the clock again.
      if (i % 10 === 0) clock.advance(50);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  afterAll(async () => {
    await s.close();
  });

  /** Latency is whole seconds of a running clock; two reads a moment apart may straddle a second. */
  function withoutLatency(body: { queues?: Record<string, { backlog: number; latency: number }> }) {
    if (!body.queues) return body;
    return { ...body, queues: Object.fromEntries(Object.entries(body.queues).map(([k, v]) => [k, { backlog: v.backlog }])) };
  }

  describe('metrics API auth', () => {
    it.each(PREFIXES.flatMap((p) => ENDPOINTS.map((e) => `${p}/${e}`)))('%s: admin 200, non-admin 403, none/unknown/runner token 401 (runner and CI tokens are not user tokens)', async (path) => {
      const url = `${s.url}${path}`;
      for (const ok of [
        await http(url, { token: s.adminToken }),
        await http(url, { token: adminUserToken }),
        await http(`${url}?private_token=${s.adminToken}`),
      ]) {
        expect(ok.status).toBe(200);
        expect(ok.headers.get('content-type')).toBe('application/json');
      }
      const forbidden = await http(url, { token: userToken });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual({ message: '403 Forbidden' });
      const denied = [await http(url), await http(url, { token: 'nope' }), await http(url, { token: runnerToken }), await http(`${url}?private_token=nope`)];
      for (const t of projectTokens) denied.push(await http(url, { token: t }));
      for (const r of denied) {
        expect(r.status).toBe(401);
        expect(r.body).toEqual({ message: '401 Unauthorized' });
      }
    });
  });

  describe('metrics API answers', () => {
    it('have GitLab’s shapes and types on every prefix', async () => {
      for (const p of PREFIXES) {
        for (const e of ENDPOINTS) {
          const r = await http(`${s.url}${p}/${e}`, { token: s.adminToken });
          expect(Value.Check(SCHEMAS[e], r.body), `${p}/${e}: ${JSON.stringify([...Value.Errors(SCHEMAS[e], r.body)].slice(0, 3))}`).toBe(true);
          expect(Object.keys(r.body).sort()).toEqual(
            { queue_metrics: ['queues'], process_metrics: ['processes'], job_stats: ['jobs'], compound_metrics: ['jobs', 'processes', 'queues'] }[e],
          );
        }
      }
      const c = (await http(`${s.url}/api/v3/jobqueue/compound_metrics`, { token: s.adminToken })).body as CompoundMetrics;
      for (const q of Object.values(c.queues)) {
        expect(Object.keys(q).sort()).toEqual(['backlog', 'latency']);
        expect(Number.isInteger(q.backlog) && Number.isInteger(q.latency)).toBe(true);
      }
      expect(Object.keys(c.jobs).sort()).toEqual(['enqueued', 'failed', 'processed']);
      const own = c.processes.find((p) => p.tag === 'jobscope')!;
      expect(Object.keys(own).sort()).toEqual(['busy', 'concurrency', 'hostname', 'labels', 'pid', 'queues', 'started_at', 'tag']);
      expect(own.pid).toBe(process.pid); // the in-process server: the pid is this one
      expect(own.hostname).toBe((await import('node:os')).hostname());
      expect(own.started_at).toMatch(STARTED_AT);
      expect(Date.parse(own.started_at)).toBeLessThanOrEqual(Date.now());
      expect(own.concurrency).toBe(1);
      expect(own.busy).toBe(1);
      expect(own.labels).toEqual([]);
      expect(own.queues).toEqual(expect.arrayContaining(['hold', 'waiting', 'other', 'stuck_builds', 'artifact_expiry', 'runner_contact', 'archive_listing']));
    });

    it('are identical on the three prefixes, also with a .json suffix', async () => {
      for (const e of ENDPOINTS) {
        const bodies = await Promise.all([...PREFIXES.map((p) => `${s.url}${p}/${e}`), `${s.url}/api/v4/sidekiq/${e}.json`].map((u) => http(u, { token: s.adminToken })));
        for (const b of bodies) expect(withoutLatency(b.body)).toEqual(withoutLatency(bodies[0]!.body));
      }
    });

    it('compound_metrics is the other three merged, and enqueued is the sum of backlogs', async () => {
      const [c, q, p, j] = await Promise.all(
        ['compound_metrics', 'queue_metrics', 'process_metrics', 'job_stats'].map(async (e) => (await http(`${s.url}/api/v3/sidekiq/${e}`, { token: s.adminToken })).body),
      );
      expect(withoutLatency(c)).toEqual(withoutLatency({ ...q, ...p, ...j }));
      for (const [name, e] of Object.entries(c.queues as Record<string, { latency: number }>)) expect(Math.abs(e.latency - q.queues[name].latency)).toBeLessThanOrEqual(1);
      const sum = (m: CompoundMetrics) => Object.values(m.queues).reduce((a, x) => a + x.backlog, 0);
      expect(c.queues.waiting.backlog).toBe(3);
      expect(c.queues.other.backlog).toBe(2);
      expect(c.queues.hold.backlog).toBe(0);
      expect(c.jobs.enqueued).toBe(sum(c));
      expect(j.jobs.enqueued).toBe(sum(q));
      expect(c.jobs.enqueued).toBe(5);
    });

    it('compoundMetrics(ctx) in-process (the job system\'s read() with a database) gives what the HTTP API gives', async () => {
      const viaHttp = (await http(`${s.url}/api/v4/sidekiq/compound_metrics`, { token: s.adminToken })).body;
      const jobs = s.server.ctx.jobs;
      const view = await jobs.read();
      const direct = view === jobs ? compoundMetrics(s.server.ctx) : compoundOf(view, jobs.now());
      expect(withoutLatency(JSON.parse(JSON.stringify(direct)))).toEqual(withoutLatency(viaHttp));
    });

    it('the HTTP answer text is exactly the in-process object serialised (same moment)', async () => {
      const now = Date.now() + 1500; // a later clock makes latencies non-zero
      const jobs = s.server.ctx.jobs;
      const view = await jobs.read();
      const text = compoundJson(view, now);
      expect(text).toBe(JSON.stringify(view === jobs ? compoundMetrics(s.server.ctx, now) : compoundOf(view, now)));
      expect(Object.values(JSON.parse(text).queues as Record<string, { latency: number }>).some((q) => q.latency > 0)).toBe(true);
    });

    it('latency counts whole seconds since the oldest waiting job was enqueued, 0 when empty', async () => {
      const latency = async () => (await http(`${s.url}/api/v4/sidekiq/queue_metrics`, { token: s.adminToken })).body.queues.aging?.latency as number;
      const q0 = (await http(`${s.url}/api/v4/sidekiq/queue_metrics`, { token: s.adminToken })).body.queues;
      expect(q0.hold).toEqual({ backlog: 0, latency: 0 }); // empty: its one job is running
      await postJobs(s.url, s.adminToken, { queue: 'aging' }); // waits: the only slot is held
      expect(await latency()).toBe(0);
      clock.advance(999);
      expect(await latency()).toBe(0); // truncated, not rounded
      clock.advance(1);
      expect(await latency()).toBe(1);
      // A newer job does not reset it: latency is the oldest job's age.
      await postJobs(s.url, s.adminToken, { queue: 'aging' });
      expect(await latency()).toBe(1);
      clock.advance(1000);
      expect(await latency()).toBe(2);
      clock.advance(58_000);
      expect(await latency()).toBe(60);
    });
  });
});
