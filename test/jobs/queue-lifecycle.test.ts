// Queues can go away: deleted through the control API (pending jobs dropped, built-in queues
// refused), forgotten once empty and idle, capped in number, and the dashboard history records at
// most --history-max-queues of them per sample.
import { describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { useServers } from '../helpers/server-set.ts';
import { http } from '../helpers/http.ts';
import type { History } from '../../contract/app.ts';
import { ManualClock } from '../../server/clock.ts';
import { metrics as jobMetrics, postJobs } from './lib.ts';
import { waitFor } from '../helpers/wait.ts';
import { addConnection, metrics, monitor } from '../monitor/support.ts';

const BUILTIN = ['stuck_builds', 'artifact_expiry', 'runner_contact', 'archive_listing'];
const servers = useServers({ monitorIntervalMs: 3_600_000 }, 'all');
const start = servers.start;

type Q = { name: string; backlog: number };
const queues = async (s: TestServer) => (await http(`${s.url}/api/v3/sim/jobs/queues`, { token: s.adminToken })).body as Q[];
const del = (s: TestServer, name: string) => http(`${s.url}/api/v3/sim/jobs/queues/${encodeURIComponent(name)}`, { method: 'DELETE', token: s.adminToken });

describe('deleting a queue', () => {
  it('drops its waiting jobs and the queue, also across a restart; the in-flight job is not retried into it', async () => {
    const s = await start({ jobConcurrency: 1 });
    await postJobs(s.url, s.adminToken, { queue: 'doomed', count: 5, duration_ms: 3_600_000, fail: true });
    await waitFor('one job running', async () => (await queues(s)).find((q) => q.name === 'doomed')?.backlog === 4);
    const res = await del(s, 'doomed');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'doomed', dropped: 5 });
    expect((await queues(s)).map((q) => q.name)).not.toContain('doomed');
    expect((await http(`${s.url}/api/v3/sim/jobs/retries`, { token: s.adminToken })).body).toEqual([]);
    expect((await del(s, 'doomed')).status).toBe(404);

    const dataDir = s.dataDir;
    await servers.close(s, { keepData: true });
    const again = await start({ dataDir });
    expect((await queues(again)).map((q) => q.name)).not.toContain('doomed');
  });

  it('refuses built-in queues and the demo load’s queues with 409, unknown ones with 404', async () => {
    const s = await start();
    for (const name of BUILTIN) {
      const res = await del(s, name);
      expect(res.status, name).toBe(409);
      expect((res.body as { message: string }).message).toMatch(/built-in/);
    }
    const load = await http(`${s.url}/api/v3/sim/load`, { method: 'PUT', json: {}, token: s.adminToken });
    expect(load.status).toBe(200);
    const demoQueue = (load.body as { queues: string[] }).queues[0]!;
    const demo = await del(s, demoQueue);
    expect(demo.status).toBe(409);
    expect((demo.body as { message: string }).message).toMatch(/demo/);
    await http(`${s.url}/api/v3/sim/load`, { method: 'DELETE', token: s.adminToken });
    expect((await del(s, 'never-was')).status).toBe(404);
    expect((await del(s, 'bad name!')).status).toBe(400);
  });
});

describe('queue limits', () => {
  it('the job API creates at most --max-queues queues (409 past it); existing queues still take jobs', async () => {
    const s = await start({ maxQueues: BUILTIN.length + 3 });
    for (const q of ['a', 'b', 'c']) await postJobs(s.url, s.adminToken, { queue: q });
    const refused = await http(`${s.url}/api/v3/sim/jobs`, { json: { queue: 'd' }, token: s.adminToken });
    expect(refused.status).toBe(409);
    expect((refused.body as { message: string }).message).toMatch(/--max-queues/);
    expect((await queues(s)).map((q) => q.name)).not.toContain('d');
    await postJobs(s.url, s.adminToken, { queue: 'a', count: 2 });
    expect((await del(s, 'b')).status).toBe(200);
    await postJobs(s.url, s.adminToken, { queue: 'd' });
  });

  it('an empty synthetic queue idle past --queue-forget-idle-minutes is forgotten; busy and built-in ones stay', async () => {
    const s = await start({ queueForgetIdleMinutes: 30, jobConcurrency: 1 });
    await postJobs(s.url, s.adminToken, { queue: 'brief' });
    await waitFor('brief drained', async () => (await queues(s)).find((q) => q.name === 'brief')?.backlog === 0);
    await postJobs(s.url, s.adminToken, { queue: 'busy', count: 3, duration_ms: 3_600_000 });
    const jobs = s.server.ctx.jobs;
    expect(jobs.forgetIdleQueues(Date.now() + 10 * 60_000)).toEqual([]); // not idle long enough yet
    expect(jobs.forgetIdleQueues(Date.now() + 31 * 60_000)).toEqual(['brief']);
    const names = (await queues(s)).map((q) => q.name);
    expect(names).not.toContain('brief');
    expect(names).toEqual(expect.arrayContaining([...BUILTIN, 'busy']));
    // Forgotten is not refused: the name can be used again.
    await postJobs(s.url, s.adminToken, { queue: 'brief' });
    const off = await start({ queueForgetIdleMinutes: 0 });
    await postJobs(off.url, off.adminToken, { queue: 'kept' });
    await waitFor('kept drained', async () => (await queues(off)).find((q) => q.name === 'kept')?.backlog === 0);
    expect(off.server.ctx.jobs.forgetIdleQueues(Date.now() + 365 * 24 * 3_600_000)).toEqual([]);
  });
});

describe('forgetting idle queues on the job system’s clock', () => {
  it('the timer forgets a queue once it has been idle for --queue-forget-idle-minutes, with no call and no wait', async () => {
    const clock = new ManualClock();
    // Built-in periodic jobs off: the half hour moved would run them and keep their pool busy.
    const s = await start({ queueForgetIdleMinutes: 30, stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0 }, { clock });
    await postJobs(s.url, s.adminToken, { queue: 'brief' });
    await waitFor('brief done', async () => (await jobMetrics(s.url, s.adminToken, 'job_stats')).jobs.processed === 1);
    clock.advance(29 * 60_000);
    expect((await queues(s)).map((q) => q.name)).toContain('brief');
    clock.advance(2 * 60_000); // a tick of the timer (every 15 min at most, here every minute) after the 30th minute
    const names = (await queues(s)).map((q) => q.name);
    expect(names).not.toContain('brief');
    expect(names).toEqual(expect.arrayContaining(BUILTIN));
  });
});

describe('history tracks at most --history-max-queues queues', () => {
  it('queues past the limit are not sampled, the answer says how many; a slot freed by a vanished queue is reused', async () => {
    const s = await start({ historyMaxQueues: 3 });
    const id = await addConnection(s, { base_url: 'http://127.0.0.1:9', private_token: 'x', enabled: false });
    const m = monitor(s);
    const c = m.connections.get(id)!;
    const t0 = Date.now() - 60_000;
    const many: Record<string, [number, number]> = {};
    for (let i = 0; i < 50; i++) many[`q${String(i).padStart(2, '0')}`] = [i, 1];
    m.record(c, t0, metrics({ a: [1, 0], b: [2, 0], c: [3, 0] }, { processed: 0, failed: 0 }), '');
    m.record(c, t0 + 5000, metrics({ ...many, a: [1, 0], b: [2, 0], c: [3, 0] }, { processed: 1, failed: 0 }), '');
    const h1 = (await http<History & { queues_untracked: number; history_max_queues: number }>(`${s.url}/api/app/connections/${id}/history?from=${t0 - 1000}&to=${t0 + 6000}`, { token: s.adminToken })).body;
    expect(h1.queue_names.sort()).toEqual(['a', 'b', 'c']);
    expect(h1.queues_untracked).toBe(50);
    expect(h1.history_max_queues).toBe(3);
    // 'c' is gone: its slot goes to a new queue.
    m.record(c, t0 + 10_000, metrics({ a: [1, 0], b: [2, 0], zz: [9, 0] }, { processed: 2, failed: 0 }), '');
    const h2 = (await http<History & { queues_untracked: number }>(`${s.url}/api/app/connections/${id}/history?from=${t0 + 9000}&to=${t0 + 11_000}`, { token: s.adminToken })).body;
    expect(h2.queue_names.sort()).toEqual(['a', 'b', 'zz']);
    expect(h2.queues_untracked).toBe(0);
  });
});
