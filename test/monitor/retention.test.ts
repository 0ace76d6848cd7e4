// Bounded retention: raw samples only for the raw window, 1-minute rollups for the whole retention,
// nothing older, in memory and on disk; and a remote that never answers times out with advice.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http as request } from '../helpers/http.ts';
import type { History, TestResult } from '../../server/contract/app.ts';
import { addConnection, metrics, monitor } from './support.ts';

const HOUR = 3_600_000;
const MIN = 60_000;
let s: TestServer;

beforeAll(async () => {
  s = await startServer({ monitorIntervalMs: HOUR, historyRawHours: 1, historyDays: 1, remoteTimeoutMs: 300 });
});
afterAll(async () => {
  await s.close();
});

const history = async (id: string, from: number, to: number) =>
  (await request<History>(`${s.url}/api/app/connections/${id}/history?from=${from}&to=${to}&points=1000`, { token: s.adminToken })).body;

describe('retention', () => {
  it('keeps raw samples for the raw window, rollups for the retention, and drops the rest', async () => {
    const id = await addConnection(s, { base_url: 'http://127.0.0.1:9', private_token: 'x', enabled: false });
    const m = monitor(s);
    const c = m.connections.get(id)!;
    const now = Math.floor(Date.now() / MIN) * MIN;
    const burst = (t0: number) => {
      for (let i = 0; i < 36; i++) m.record(c, t0 + i * 5000, metrics({ q: [7, 1] }, { processed: i, failed: 0 }), '');
    };
    burst(now - 30 * HOUR); // past the 1-day retention
    burst(now - 2 * HOUR); // past the 1-hour raw window: rollups only
    burst(now - 3 * MIN); // recent: raw
    expect((await history(id, now - 31 * HOUR, now - 29 * HOUR)).t).toEqual([]);
    const old = await history(id, now - 2 * HOUR - 5 * MIN, now - 2 * HOUR + 5 * MIN);
    expect(old.t.length).toBe(3); // three minute rollups
    expect(old.t.every((t) => t % MIN === 0)).toBe(true);
    expect(old.queues.q!.backlog).toEqual([7, 7, 7]);
    const recent = await history(id, now - 4 * MIN, now);
    expect(recent.t.length).toBe(36); // every raw sample
    const rows = s.server.ctx.store.db.all<{ tier: number; n: number; oldest: number }>(
      'SELECT tier, COUNT(*) AS n, MIN(t) AS oldest FROM monitor_samples WHERE connection_id = ? GROUP BY tier ORDER BY tier',
      [id],
    );
    expect(rows[0]!.oldest).toBeGreaterThanOrEqual(now - HOUR - MIN); // raw
    expect(rows[1]!.oldest).toBeGreaterThanOrEqual(now - 25 * HOUR); // rollups
  });

  it('gives up on a remote that never answers, saying what to do', async () => {
    const hang = http.createServer(() => {
      /* never answers */
    });
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(hang.address() as AddressInfo).port}`;
      const r = await request<TestResult>(`${s.url}/api/app/connections/test`, { token: s.adminToken, json: { name: 'slow', base_url: url, private_token: 't' } });
      expect(r.body.ok).toBe(false);
      expect(r.body.status).toBeNull();
      expect(r.body.message).toMatch(/no answer from .* within 0\.3 s.*remote-timeout-ms/);
    } finally {
      hang.closeAllConnections();
      await new Promise((r) => hang.close(r));
    }
  });
});
