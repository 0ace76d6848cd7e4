// Rates of a Sidekiq that adds to its counters once per 5 s heartbeat, sampled every 2 s: the
// rate is taken over a window of at least 10 s, so it holds steady instead of a 0 / 2× sawtooth;
// rollups and resets still give the true average.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import type { History } from '../../contract/app.ts';
import { addConnection, metrics, monitor } from './support.ts';
import { RateWindow } from '../../server/monitor/rate-window.ts';

const HOUR = 3_600_000;
let s: TestServer;

beforeAll(async () => {
  s = await startServer({ monitorIntervalMs: HOUR });
});
afterAll(async () => {
  await s.close();
});

async function history(conn: string, q: Record<string, number>): Promise<History> {
  const qs = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]));
  const r = await http<History>(`${s.url}/api/app/connections/${conn}/history?${qs}`, { token: s.adminToken });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

describe('rates over a window of heartbeats', () => {
  it('draws 15/s, not a sawtooth, for counters flushed every 5 s and sampled every 2 s', async () => {
    const id = await addConnection(s, { base_url: 'http://127.0.0.1:9', private_token: 'x', enabled: false });
    const m = monitor(s);
    const c = m.connections.get(id)!;
    const t0 = Math.floor((Date.now() - HOUR) / 10_000) * 10_000;
    // 15 jobs/s, added 75 at a time on each heartbeat (t = 5 s, 10 s, …).
    const counter = (t: number) => 75 * Math.floor((t - t0) / 5000);
    const n = 300; // 10 minutes of 2 s samples
    for (let i = 0; i < n; i++) {
      const t = t0 + i * 2000;
      m.record(c, t, metrics({ q: [0, 0] }, { processed: counter(t), failed: Math.floor(counter(t) / 15) }), '');
    }
    // Every sample its own bucket, as on the dashboard's short ranges.
    const h = await history(id, { from: t0, to: t0 + n * 2000, points: n + 1 });
    const rates = h.totals.processed_rate.slice(10).filter((v) => v !== null) as number[];
    expect(rates.length).toBeGreaterThan(250);
    // A window of 10–12 s holds two or three flushes: 12.5–18.75/s, never 0 nor 37.5.
    for (const r of rates) expect(r).toBeGreaterThanOrEqual(12.5);
    for (const r of rates) expect(r).toBeLessThanOrEqual(18.75);
    const failed = h.totals.failed_rate.slice(10).filter((v) => v !== null) as number[];
    for (const r of failed) expect(r).toBeGreaterThan(0);
    // Coarse buckets still give the true rate: over the whole range exactly, and per bucket within one
    // flush in its ~30 samples (a bucket's edges fall anywhere in the 5 s cycle, by the clock the
    // test runs at: 14.44/s was seen for a true 15).
    const coarse = await history(id, { from: t0, to: t0 + n * 2000, points: 10 });
    const avg = coarse.totals.processed_rate.filter((v) => v !== null) as number[];
    expect(avg.length).toBeGreaterThanOrEqual(8);
    expect(avg.reduce((a, b) => a + b, 0) / avg.length).toBeCloseTo(15, 0);
    for (const r of avg) expect(Math.abs(r - 15)).toBeLessThanOrEqual(1.5);
  });

  it('sums the steps inside the window, so a counter reset counts from zero', () => {
    const w = new RateWindow();
    expect(w.add(0, 100, 0, HOUR)).toBeNull();
    w.add(5000, 150, 0, HOUR);
    // Restarted at 0 and counted 20 since: 50 + 20 over the window from t = 0.
    expect(w.add(10_000, 20, 0, HOUR)).toEqual({ processedInc: 70, failedInc: 0, dt: 10 });
    // The window moves on: from t = 5 s (the newest reading at least 10 s older).
    expect(w.add(15_000, 40, 0, HOUR)).toEqual({ processedInc: 40, failedInc: 0, dt: 10 });
    // Past the longest span, a fresh start: no rate.
    expect(w.add(15_000 + 2 * HOUR, 50, 0, HOUR)).toBeNull();
  });
});
