// Alerts through a real server: one fires when a sample crosses a threshold, resolves at the first
// sample back under it or without its queue, names its connection, keeps its acknowledgement in the
// data dir across a restart, and only the most recent resolved ones are kept. A fake GitLab answers
// the samples (a real HTTP server); sampleNow takes one sample.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import type { Alert, AlertBoard } from '../../contract/app.ts';
import { addConnection, metrics, monitor, startFakeGitLab, type FakeGitLab } from './support.ts';

let fake: FakeGitLab;
beforeAll(async () => {
  fake = await startFakeGitLab();
});
afterAll(async () => {
  await fake?.close();
});

const api = <T>(s: TestServer, path: string, opts: Parameters<typeof http>[1] = {}) => http<T>(`${s.url}/api/app${path}`, { token: s.adminToken, ...opts });
const board = async (s: TestServer) => (await api<AlertBoard>(s, '/alerts/board')).body;
const queues = (q: Record<string, [number, number]>) => (fake.answer = { metrics: metrics(q, { processed: 0, failed: 0 }) });

/** A server sampling only when told, with one connection named `name` whose `default` queue alerts past a backlog of 5 and a latency of 60 s. */
async function watched(name: string, overrides: Record<string, unknown> = {}): Promise<{ s: TestServer; id: string; sample: () => Promise<void> }> {
  const s = await startServer({ monitorIntervalMs: 3_600_000, ...overrides });
  const id = await addConnection(s, { name, base_url: fake.url, private_token: fake.token });
  expect((await api(s, `/connections/${id}/thresholds`, { method: 'PUT', json: { queues: { default: { backlog: 5, latency: 60 } } } })).status).toBe(200);
  return { s, id, sample: () => monitor(s).sampleNow(id) };
}

describe('alert lifecycle', () => {
  it('fires over a threshold, resolves back under it, and a later crossing is a new alert', async () => {
    const { s, id, sample } = await watched('billing sidekiq');
    try {
      queues({ default: [3, 90] });
      await sample();
      await sample();
      let b = await board(s);
      expect(b.firing).toHaveLength(1);
      expect(b.firing[0]).toMatchObject({ connection_id: id, connection_name: 'billing sidekiq', kind: 'latency', queue: 'default', value: 90, threshold: 60, state: 'firing', resolved_at: null, acknowledged_at: null });
      const first = b.firing[0]!;

      queues({ default: [3, 2] }); // drained: latency back under
      await sample();
      b = await board(s);
      expect(b.firing).toEqual([]);
      expect(b.resolved).toMatchObject([{ id: first.id, state: 'resolved', fired_at: first.fired_at }]);
      expect(Date.parse(b.resolved[0]!.resolved_at!)).toBeGreaterThanOrEqual(Date.parse(first.fired_at));

      queues({ default: [3, 120] });
      await sample();
      b = await board(s);
      expect(b.firing).toHaveLength(1);
      expect(b.firing[0]!.id).toBeGreaterThan(first.id);
      expect(b.firing[0]!.value).toBe(120);
      // The since-list the charts poll has both crossings.
      expect((await api<Alert[]>(s, `/alerts?connection_id=${id}`)).body.map((a) => a.state)).toEqual(['resolved', 'firing']);
    } finally {
      await s.close();
    }
  });

  it('resolves when its queue is gone, and when its rule is removed', async () => {
    const { s, id, sample } = await watched('ops');
    try {
      queues({ default: [50, 1], other: [0, 0] });
      await sample();
      expect((await board(s)).firing).toMatchObject([{ kind: 'backlog', queue: 'default', value: 50 }]);
      queues({ other: [0, 0] }); // the queue was deleted
      await sample();
      expect((await board(s)).firing).toEqual([]);
      expect((await board(s)).resolved).toMatchObject([{ kind: 'backlog', queue: 'default', state: 'resolved' }]);

      queues({ default: [50, 1] });
      await sample();
      expect((await board(s)).firing).toHaveLength(1);
      expect((await api(s, `/connections/${id}/thresholds`, { method: 'PUT', json: { queues: {} } })).status).toBe(200);
      await sample();
      expect((await board(s)).firing).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it('keeps an acknowledgement and a firing alert across a restart on the same data dir, and names the connection as it is now', async () => {
    const { s, id, sample } = await watched('payments');
    let s2: TestServer | undefined;
    try {
      queues({ default: [40, 1] });
      await sample();
      const [a] = (await board(s)).firing;
      const acked = await api<Alert>(s, `/alerts/${a!.id}/acknowledge`, { method: 'POST' });
      expect(acked.status).toBe(200);
      expect(acked.body.acknowledged_at).not.toBeNull();
      // Once: a second acknowledgement keeps the first time.
      expect((await api<Alert>(s, `/alerts/${a!.id}/acknowledge`, { method: 'POST' })).body.acknowledged_at).toBe(acked.body.acknowledged_at);
      await s.close({ keepData: true });

      s2 = await startServer({ monitorIntervalMs: 3_600_000, dataDir: s.dataDir });
      expect((await api(s2, `/connections/${id}`, { method: 'PATCH', json: { name: 'payments (eu)' } })).status).toBe(200);
      await monitor(s2).sampleNow(id); // still over: the same alert, not a new one
      const b = await board(s2);
      expect(b.firing).toMatchObject([{ id: a!.id, connection_name: 'payments (eu)', acknowledged_at: acked.body.acknowledged_at }]);
    } finally {
      await s2?.close();
      fs.rmSync(s.dataDir, { recursive: true, force: true });
    }
  });

  it('keeps only the most recent resolved alerts (--alerts-keep-resolved)', async () => {
    const { s, sample } = await watched('bounded', { alertsKeepResolved: 2 });
    try {
      for (let i = 0; i < 4; i++) {
        queues({ default: [10 + i, 0] });
        await sample();
        queues({ default: [0, 0] });
        await sample();
      }
      const b = await board(s);
      expect(b.firing).toEqual([]);
      expect(b.resolved.map((a) => a.value)).toEqual([13, 12]);
      // A firing alert is never dropped for the bound.
      queues({ default: [99, 0] });
      await sample();
      expect((await board(s)).firing.map((a) => a.value)).toEqual([99]);
    } finally {
      await s.close();
    }
  });

  it('answers an unknown or malformed alert id with what to do next', async () => {
    const s = await startServer({ monitorIntervalMs: 3_600_000 });
    try {
      const unknown = await api<{ message: string }>(s, '/alerts/987654/acknowledge', { method: 'POST' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.message).toMatch(/no alert 987654.*alerts\/board/);
      const bad = await api<{ message: string }>(s, '/alerts/abc/acknowledge', { method: 'POST' });
      expect(bad.status).toBe(400);
      expect(typeof bad.body.message).toBe('string');
      expect((await api(s, '/alerts/board?resolved=100000')).status).toBe(400);
    } finally {
      await s.close();
    }
  });
});
