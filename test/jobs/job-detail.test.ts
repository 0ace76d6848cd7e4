// Job pages on this server's own job system (the "embedded" connection), on SQLite, PostgreSQL and Redis
// (`serve --redis`): a retry and a dead entry by the key their lists give, a queued job by the id
// its queue page lists; the same answer shape as a sidekiq connection's (test/sidekiq/job-detail).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eachBackend } from '../api/backends.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { useServers } from '../helpers/server-set.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { ManualClock } from '../../server/clock.ts';
import type { JobDetail } from '../../contract/job-detail.ts';
import type { FailedJobView, QueuedJobView } from '../../contract/jobs.ts';
import { onRedis, postJobs } from './lib.ts';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

const servers = useServers();
const sim = (s: TestServer, p: string, method = 'GET') => http(`${s.url}/api/v3/sim${p}`, { token: s.adminToken, method });
const detail = (s: TestServer, p: string) => http(`${s.url}/api/app/connections/embedded${p}`, { token: s.adminToken });

async function failedIn(s: TestServer, list: 'retries' | 'dead', queue: string): Promise<FailedJobView> {
  return waitFor(`a job of ${queue} in ${list}`, async () => ((await sim(s, `/jobs/${list}?per_page=100`)).body as FailedJobView[]).find((j) => j.queue === queue));
}

const QUIET = { jobConcurrency: 1, stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0 };
const TITLE = 'opens a retry entry, a dead entry and a queued job with every field; a gone entry and the scheduled set say why not';

async function opensEveryKind(s: TestServer, clock: ManualClock): Promise<void> {
  await postJobs(s.url, s.adminToken, { queue: 'flaky', class: 'FlakyWorker', fail: true, retry: 5 });
  await postJobs(s.url, s.adminToken, { queue: 'doomed', class: 'DoomedWorker', fail: true, retry: 0 });
  const retry = await failedIn(s, 'retries', 'flaky');
  const dead = await failedIn(s, 'dead', 'doomed');

  const r = await detail(s, `/jobs/sets/retry/${encodeURIComponent(retry.key)}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const d = r.body as JobDetail;
  expect(d).toMatchObject({
    // Sidekiq's args (an array) and retry_count (0 after the first failure), whichever backend keeps the job.
    where: 'retry', key: retry.key, class: 'FlakyWorker', queue: 'flaky', args: [retry.args], retry: 5, retry_count: 0, retried_at: null,
    error_class: 'Error', error_message: 'SyntheticJob failed on purpose (fail: true)', next_retry_at: retry.run_at, died_at: null, scheduled_at: null,
    enqueued_at: retry.enqueued_at, created_at: retry.created_at, backtrace: null, tags: [], unreadable: false, latency: null,
  });
  expect(d.failed_at).toBe(retry.first_failed_at ?? retry.failed_at);
  expect(JSON.parse(d.raw)).toMatchObject({ class: 'FlakyWorker', queue: 'flaky' });

  const dd = (await detail(s, `/jobs/sets/dead/${encodeURIComponent(dead.key)}`)).body as JobDetail;
  const score = Number(dead.key.slice(0, dead.key.indexOf('-')));
  expect(dd).toMatchObject({ where: 'dead', class: 'DoomedWorker', queue: 'doomed', retry: 0, retry_count: 0, error_class: 'Error', died_at: new Date(score * 1000).toISOString(), next_retry_at: null });

  // The only worker kept busy, so the next jobs wait.
  await postJobs(s.url, s.adminToken, { queue: 'blocker', duration_ms: 600_000 });
  await waitFor('the blocker running', async () => (await sim(s, '/jobs/queues/blocker')).body.backlog === 0);
  await postJobs(s.url, s.adminToken, { queue: 'waiting', class: 'ReportJob', count: 3, duration_ms: 5 });
  clock.advance(42_000);
  const queued = (await sim(s, '/jobs/queues/waiting/jobs')).body as QueuedJobView[];
  const q = await detail(s, `/jobs/queues/waiting/${queued[2]!.id}`);
  expect(q.status, JSON.stringify(q.body)).toBe(200);
  expect(q.body).toMatchObject({ where: 'queue', key: null, class: 'ReportJob', queue: 'waiting', args: [{ duration_ms: 5 }], enqueued_at: queued[2]!.enqueued_at, latency: 42, retry_count: null });
  expect((await detail(s, '/jobs/queues/waiting/999999')).body.message).toMatch(/not in queue "waiting": it ran, or was deleted/);

  expect((await sim(s, '/jobs/retries/retry', 'POST')).status).toBe(200);
  const gone = await detail(s, `/jobs/sets/retry/${encodeURIComponent(retry.key)}`);
  expect(gone.status).toBe(404);
  expect(gone.body.message).toMatch(/no longer in the retry set: it was retried/);

  const sched = await detail(s, `/jobs/sets/schedule/${encodeURIComponent(retry.key)}`);
  expect(sched.status).toBe(404);
  expect(sched.body.message).toMatch(/no scheduled set/);
}

eachBackend((startServer) => {
  const started: TestServer[] = [];
  afterEach(async () => {
    for (const s of started.splice(0)) await s.close();
  });
  it(TITLE, async () => {
    const clock = new ManualClock();
    const s = await startServer(QUIET, { clock });
    started.push(s);
    await opensEveryKind(s, clock);
  }, 60_000);
});

describe('redis (serve --redis)', () => {
  it(TITLE, async () => {
    const clock = new ManualClock();
    await opensEveryKind(await servers.start({ ...onRedis(redis.url), ...QUIET }, { clock }), clock);
  }, 60_000);
});
