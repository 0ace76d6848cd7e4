// Sidekiq Web's pages over the control API: a queue's next jobs paged (durable and memory queues),
// the retry set (paged, retry now, delete by ids, empty) and the dead set (paged, delete by ids),
// on a real server; a deletion is kept across a restart; bad ids and pages are 4xx with a message.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, type TestServer } from '../helpers/server.ts';
import { eachBackend } from '../api/backends.ts';
import { http } from '../helpers/http.ts';
import { ManualClock } from '../../server/clock.ts';
import { metrics, postJobs } from './lib.ts';
import { waitFor } from '../helpers/wait.ts';

eachBackend((startServer) => {
  const servers: TestServer[] = [];
  async function start(overrides: Record<string, unknown> = {}, clock?: ManualClock) {
    const s = await startServer({ stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0, ...overrides }, { clock });
    servers.push(s);
    return s;
  }
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  type Failed = { id: number; queue: string; class: string; retry_count: number; error_class: string | null; error_message: string | null; run_at: string | null; failed_at: string | null };
  const get = (s: TestServer, path: string) => http(`${s.url}/api/v3/sim${path}`, { token: s.adminToken });
  const post = (s: TestServer, path: string, json?: unknown) => http(`${s.url}/api/v3/sim${path}`, { method: 'POST', json, token: s.adminToken });
  const totals = (h: Headers) => ({ total: h.get('x-total'), pages: h.get('x-total-pages'), page: h.get('x-page'), per_page: h.get('x-per-page'), next: h.get('x-next-page'), prev: h.get('x-prev-page') });

  /** `n` jobs failing once each into the retry set (Sidekiq's backoff in real seconds on a clock nobody moves: they stay). */
  async function intoRetrySet(s: TestServer, queue: string, n: number, cls = 'FlakyWorker'): Promise<Failed[]> {
    await postJobs(s.url, s.adminToken, { queue, class: cls, count: n, fail: true, retry: 5 });
    return waitFor(`${n} in the retry set`, async () => {
      const r = (await get(s, '/jobs/retries?per_page=1000')).body as Failed[];
      const mine = r.filter((j) => j.queue === queue);
      return mine.length === n ? mine : undefined;
    });
  }

  async function intoDeadSet(s: TestServer, queue: string, n: number, cls = 'DoomedWorker'): Promise<Failed[]> {
    await postJobs(s.url, s.adminToken, { queue, class: cls, count: n, fail: true, retry: 0 });
    return waitFor(`${n} in the dead set`, async () => {
      const d = ((await get(s, '/jobs/dead?per_page=1000')).body as Failed[]).filter((j) => j.queue === queue);
      return d.length === n ? d : undefined;
    });
  }

  describe('a queue page', () => {
    it('lists the waiting jobs in the order workers take them, paged, with size and latency', async () => {
      const clock = new ManualClock();
      const s = await start({ jobConcurrency: 1 }, clock);
      await postJobs(s.url, s.adminToken, { queue: 'blocker', duration_ms: 600_000 }); // the only worker is busy from now on
      await waitFor('the blocker running', async () => (await get(s, '/jobs/queues/blocker')).body.backlog === 0);
      await postJobs(s.url, s.adminToken, { queue: 'reports', class: 'ReportJob', count: 7, duration_ms: 5 });
      clock.advance(90_000);
      await postJobs(s.url, s.adminToken, { queue: 'reports', class: 'LateJob', count: 3 });

      const q = await get(s, '/jobs/queues/reports');
      expect(q.status).toBe(200);
      expect(q.body).toMatchObject({ name: 'reports', durable: true, builtin: false, backlog: 10, latency: 90, processes: 1 });
      expect((await get(s, '/jobs/queues/stuck_builds')).body).toMatchObject({ builtin: true });

      const p1 = await get(s, '/jobs/queues/reports/jobs?per_page=4');
      expect(totals(p1.headers)).toEqual({ total: '10', pages: '3', page: '1', per_page: '4', next: '2', prev: '' });
      const p3 = await get(s, '/jobs/queues/reports/jobs?per_page=4&page=3');
      expect(totals(p3.headers)).toMatchObject({ page: '3', next: '', prev: '2' });
      const all = [...(p1.body as Failed[]), ...((await get(s, '/jobs/queues/reports/jobs?per_page=4&page=2')).body as Failed[]), ...(p3.body as Failed[])];
      expect(all.map((j) => j.class)).toEqual([...Array(7).fill('ReportJob'), 'LateJob', 'LateJob', 'LateJob']);
      expect(new Set(all.map((j) => j.id)).size).toBe(10);
      expect(all[0]).toMatchObject({ queue: 'reports', args: { duration_ms: 5 }, retry: 25, retry_count: null, enqueued_at: new Date(clock.now() - 90_000).toISOString() });
      expect((await get(s, '/jobs/queues/reports/jobs?per_page=4&page=9')).body).toEqual([]);
      // Default page size: 25, as Sidekiq Web.
      expect(totals((await get(s, '/jobs/queues/reports/jobs')).headers).per_page).toBe('25');
    });

    it('lists a memory (demo) queue too', async () => {
      const s = await start();
      const started = await http(`${s.url}/api/v3/sim/load`, {
        method: 'PUT',
        token: s.adminToken,
        json: { processes: 1, concurrency: 1, queues: 1, rate: 200, wave: 0, duration_ms: 600_000, failure_rate: 0, burst_every_s: 0, burst_size: 0, seed: 3 },
      });
      const name = (started.body.queues as string[])[0]!;
      const jobs = await waitFor('demo jobs waiting', async () => {
        const r = await get(s, `/jobs/queues/${name}/jobs?per_page=3`);
        return (r.body as Failed[]).length === 3 ? r : undefined;
      });
      expect(Number(jobs.headers.get('x-total'))).toBeGreaterThanOrEqual(3);
      expect((jobs.body as Failed[])[0]!.queue).toBe(name);
      expect((await get(s, `/jobs/queues/${name}`)).body).toMatchObject({ durable: false, builtin: false });
    });

    it('answers 404 for an unknown queue and 400 for bad pages', async () => {
      const s = await start();
      for (const path of ['/jobs/queues/nope', '/jobs/queues/nope/jobs']) {
        const r = await get(s, path);
        expect(r.status, path).toBe(404);
        expect(r.body.message).toMatch(/Queue Not Found/);
      }
      for (const q of ['page=0', 'page=-1', 'page=x', 'per_page=0', 'per_page=1001', 'page=1e400', 'page=2000000']) {
        const r = await get(s, `/jobs/queues/default/jobs?${q}`);
        expect(r.status, q).toBe(400);
        expect(typeof r.body.message).toBe('string');
      }
      expect((await get(s, '/jobs/queues/..%2Fetc/jobs')).status).toBe(400);
    });
  });

  describe('the retry set', () => {
    it('is paged soonest first, with the error split into class and message', async () => {
      const s = await start({}, new ManualClock());
      const mine = await intoRetrySet(s, 'flaky', 5);
      const p = await get(s, '/jobs/retries?per_page=2&page=2');
      expect(totals(p.headers)).toMatchObject({ total: '5', pages: '3', page: '2' });
      expect(p.body).toHaveLength(2);
      const runAts = mine.map((j) => Date.parse(j.run_at!));
      expect(runAts).toEqual([...runAts].sort((a, b) => a - b));
      expect(mine[0]).toMatchObject({ class: 'FlakyWorker', retry_count: 0, error_class: 'Error', error_message: 'SyntheticJob failed on purpose (fail: true)' });
      // Older callers' `limit` still caps the array.
      expect((await get(s, '/jobs/retries?limit=3')).body).toHaveLength(3);
    });

    it('retry now puts the chosen jobs back into their queue at once; the others keep waiting', async () => {
      const s = await start({}, new ManualClock());
      const [a, b, c] = await intoRetrySet(s, 'flaky', 3);
      const failed = async () => ((await metrics(s.url, s.adminToken, 'job_stats')) as { jobs: { failed: number } }).jobs.failed;
      const r = await post(s, '/jobs/retries/retry', { ids: [a!.id, c!.id] });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ count: 2, missing: [] });
      // They ran again at once (the clock did not move) and failed again: back with the count they had,
      // as Sidekiq's Retry now lowers it before the push (retry-now-sidekiq.test.ts compares the two).
      await waitFor('a and c failed again', async () => (await failed()) === 5 && ((await get(s, '/jobs/retries')).body as Failed[]).length === 3);
      const count = async (id: number) => ((await get(s, '/jobs/retries')).body as Failed[]).find((j) => j.id === id)?.retry_count;
      expect([await count(a!.id), await count(b!.id), await count(c!.id)]).toEqual([0, 0, 0]);
      // Retry all.
      expect((await post(s, '/jobs/retries/retry')).body).toEqual({ count: 3, missing: [] });
      await waitFor('all retried', async () => (await failed()) === 8 && (await get(s, '/jobs/retries')).body.length === 3);
      expect(((await get(s, '/jobs/retries')).body as Failed[]).map((j) => j.retry_count)).toEqual([0, 0, 0]);
    });

    it('delete by ids removes them for good, also across a restart; DELETE empties it', async () => {
      const dataDir = tempDir();
      const clock = new ManualClock();
      const a = await startServer({ dataDir, stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0 }, { clock });
      const [x, y, z] = await intoRetrySet(a, 'flaky', 3);
      const del = await post(a, '/jobs/retries/delete', { ids: [x!.id, 999_999] });
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ count: 1, missing: [999_999] });
      expect(((await get(a, '/jobs/retries')).body as Failed[]).map((j) => j.id).sort()).toEqual([y!.id, z!.id].sort());
      await a.close({ keepData: true });

      const b = await start({ dataDir }, new ManualClock(clock.now()));
      expect(((await get(b, '/jobs/retries')).body as Failed[]).map((j) => j.id).sort()).toEqual([y!.id, z!.id].sort());
      const cleared = await http(`${b.url}/api/v3/sim/jobs/retries`, { method: 'DELETE', token: b.adminToken });
      expect(cleared.body).toEqual({ count: 2 });
      expect((await get(b, '/jobs/retries')).body).toEqual([]);
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('bad ids are a 4xx with a message', async () => {
      const s = await start({}, new ManualClock());
      const [one] = await intoRetrySet(s, 'flaky', 1);
      for (const path of ['/jobs/retries/retry', '/jobs/retries/delete', '/jobs/dead/delete']) {
        for (const body of [{ ids: [] }, { ids: [0] }, { ids: [-3] }, { ids: ['x'] }, { ids: [1.5] }, { ids: 'all' }, [1], 'text']) {
          const r = await post(s, path, body);
          expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(400);
          expect(typeof r.body.message).toBe('string');
        }
        const unknown = await post(s, path, { ids: [424242, 434343] });
        expect(unknown.status, path).toBe(404);
        expect(unknown.body.message).toContain('424242, 434343');
      }
      expect((await post(s, '/jobs/retries/delete', {})).status).toBe(400); // delete needs ids: no accidental "all"
      expect((await post(s, '/jobs/retries/delete')).status).toBe(400);
      // A dead id is not a retry: 404, and the job stays where it is.
      const [dead] = await intoDeadSet(s, 'doomed', 1);
      expect((await post(s, '/jobs/retries/delete', { ids: [dead!.id] })).status).toBe(404);
      expect((await post(s, '/jobs/dead/delete', { ids: [one!.id] })).status).toBe(404);
      expect((await get(s, '/jobs/retries')).body).toHaveLength(1);
      expect((await get(s, '/jobs/dead')).body).toHaveLength(1);
      expect((await http(`${s.url}/api/v3/sim/jobs/retries/delete`, { method: 'POST', json: { ids: [one!.id] }, token: 'wrong' })).status).toBe(401);
    });
  });

  describe('the dead set', () => {
    it('is paged newest first and deleted from by ids', async () => {
      const s = await start({ jobConcurrency: 1 });
      for (const cls of ['First', 'Second', 'Third']) await intoDeadSet(s, `q_${cls}`, 1, cls);
      const p1 = await get(s, '/jobs/dead?per_page=2');
      expect(totals(p1.headers)).toEqual({ total: '3', pages: '2', page: '1', per_page: '2', next: '2', prev: '' });
      const p2 = await get(s, '/jobs/dead?per_page=2&page=2');
      const all = [...(p1.body as Failed[]), ...(p2.body as Failed[])];
      expect(all.map((j) => j.class)).toEqual(['Third', 'Second', 'First']);
      expect(all[0]).toMatchObject({ retry_count: 0, error_class: 'Error', error_message: 'SyntheticJob failed on purpose (fail: true)', run_at: null });

      const del = await post(s, '/jobs/dead/delete', { ids: [all[1]!.id, all[1]!.id] });
      expect(del.body).toEqual({ count: 1, missing: [] });
      const left = await get(s, '/jobs/dead');
      expect((left.body as Failed[]).map((j) => j.class)).toEqual(['Third', 'First']);
      expect(left.headers.get('x-total')).toBe('2');
      // Deleted is gone, not retried: the queue stays empty and nothing ran.
      expect((await get(s, '/jobs/queues/q_Second')).body.backlog).toBe(0);
      // Retrying one by id still works, and the size follows.
      expect((await post(s, '/jobs/dead/retry', { ids: [all[0]!.id] })).body).toEqual({ count: 1 });
      await waitFor('the retried one dead again', async () => (await get(s, '/jobs/dead')).headers.get('x-total') === '2' && (await get(s, '/jobs/dead')).body[0].class === 'Third');
    });

    it('names its entries as the Redis mode does, `<score>-<id>`: deleted and retried by that key, a stale score names nothing', async () => {
      const s = await start({ jobConcurrency: 1 }, new ManualClock());
      const [r1, r2] = (await intoRetrySet(s, 'keyed', 2)) as (Failed & { key: string })[];
      expect(r1!.key).toBe(`${Date.parse(r1!.run_at!) / 1000}-${r1!.id}`.replace(/^(\d+)-/, '$1.0-'));
      const stale = r1!.key.replace(/^[^-]+/, '1.5');
      expect((await post(s, '/jobs/retries/delete', { ids: [stale] })).status).toBe(404);
      expect((await post(s, '/jobs/retries/delete', { ids: [r1!.key, stale] })).body).toEqual({ count: 1, missing: [stale] });
      expect(((await get(s, '/jobs/retries')).body as Failed[]).map((j) => j.id)).toEqual([r2!.id]);
      const [d] = (await intoDeadSet(s, 'keyed_dead', 1)) as (Failed & { key: string })[];
      expect(d!.key).toMatch(new RegExp(`^\\d+(\\.\\d+)?-${d!.id}$`));
      expect((await post(s, '/jobs/dead/delete', { ids: [d!.key] })).body).toEqual({ count: 1, missing: [] });
      expect((await get(s, '/jobs/dead')).body).toEqual([]);
    });
  });
});
