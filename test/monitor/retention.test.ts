// Bounded retention: raw samples only for the raw window, 1-minute rollups for the whole retention,
// nothing older, in memory and on disk; and a remote that never answers times out with advice.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http as request } from '../helpers/http.ts';
import type { History, TestResult } from '../../contract/app.ts';
import { ManualClock } from '../../server/clock.ts';
import { addConnection, metrics, monitor } from './support.ts';
import { databaseOf } from '../../server/store/index.ts';

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
    const rows = databaseOf(s.server.ctx.store).all<{ tier: number; n: number; oldest: number }>(
      'SELECT tier, COUNT(*) AS n, MIN(t) AS oldest FROM monitor_samples WHERE connection_id = ? GROUP BY tier ORDER BY tier',
      [id],
    );
    expect(rows[0]!.oldest).toBeGreaterThanOrEqual(now - HOUR - MIN); // raw
    expect(rows[1]!.oldest).toBeGreaterThanOrEqual(now - 25 * HOUR); // rollups
  });

  it('gives the same raw and rollup answers after a restart, and goes on from the open minute', async () => {
    const own = await startServer({ monitorIntervalMs: HOUR });
    const now = Math.floor(Date.now() / MIN) * MIN;
    const t0 = now - 20 * MIN;
    const id = await addConnection(own, { base_url: 'http://127.0.0.1:9', private_token: 'x', enabled: false });
    const feed = (srv: TestServer, from: number, to: number) => {
      const m = monitor(srv);
      const c = m.connections.get(id)!;
      for (let i = from; i < to; i++) m.record(c, t0 + i * 5000, metrics({ q: [i % 13, i % 5] }, { processed: 4 * i, failed: 0 }), '');
    };
    const ask = async (srv: TestServer, points: number) =>
      (await request<History>(`${srv.url}/api/app/connections/${id}/history?from=${now - 2 * HOUR}&to=${now}&points=${points}`, { token: srv.adminToken })).body;
    feed(own, 0, 151); // 12.5 minutes: the last one still open
    const coarse = await ask(own, 100);
    const fine = await ask(own, 5000);
    expect(coarse.step_ms).toBeGreaterThanOrEqual(MIN);
    expect(fine.step_ms).toBeLessThan(MIN);
    await own.close({ keepData: true });
    const again = await startServer({ monitorIntervalMs: HOUR, dataDir: own.dataDir });
    try {
      expect(await ask(again, 100)).toEqual(coarse);
      expect(await ask(again, 5000)).toEqual(fine);
      feed(again, 151, 200);
      const later = await ask(again, 100);
      expect(later.t.length).toBeGreaterThan(coarse.t.length);
      expect(later.totals.processed_rate.filter((v) => v !== null).every((v) => v === 0.8)).toBe(true); // 4 per 5 s, across the restart
    } finally {
      await again.close();
    }
  });

  it('drops what passed retention on the hour, on the monitor’s clock, with no new sample', async () => {
    const clock = new ManualClock(Math.floor(Date.now() / HOUR) * HOUR);
    const own = await startServer({ monitorIntervalMs: 100 * HOUR, historyRawHours: 1, historyDays: 1 }, { clock });
    try {
      const id = await addConnection(own, { base_url: 'http://127.0.0.1:9', private_token: 'x', enabled: false });
      const m = monitor(own);
      const c = m.connections.get(id)!;
      for (let i = 0; i < 36; i++) m.record(c, clock.now() + i * 5000, metrics({ q: [7, 1] }, { processed: i, failed: 0 }), '');
      const tiers = () =>
        databaseOf(own.server.ctx.store).all<{ tier: number; n: number }>('SELECT tier, COUNT(*) AS n FROM monitor_samples WHERE connection_id = ? GROUP BY tier ORDER BY tier', [id]);
      expect(tiers().map((r) => r.tier)).toEqual([0, 1]);
      clock.advance(HOUR);
      await m.idle();
      expect(tiers()[0]).toMatchObject({ tier: 0, n: 36 }); // the raw window is not over yet
      clock.advance(HOUR);
      await m.idle();
      expect(tiers()).toEqual([{ tier: 1, n: 2 }]); // raw rows past the hour gone; the minutes stay
      clock.advance(24 * HOUR);
      await m.idle();
      expect(tiers()).toEqual([]);
    } finally {
      await own.close();
    }
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
