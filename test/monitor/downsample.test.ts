// History queries on known data fed through the monitor's own recording path: bucket counts stay
// within `points`, averages are right on the raw and on the rollup tier, rates come from counter
// deltas across resets, failed samples are gaps (null + error), not zeros.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import type { History } from '../../contract/app.ts';
import { addConnection, metrics, monitor } from './support.ts';
import { databaseOf } from '../../server/store/index.ts';

const HOUR = 3_600_000;
const MIN = 60_000;
let s: TestServer;
let base: number;
let id: string;
const N = 2160; // 3 h of 5 s samples
const tOf = (i: number) => base + i * 5000;
const backlogA = (i: number) => i % 97;
const latencyA = (i: number) => (i * 7) % 13;
const backlogB = (i: number) => 1000 - (i % 1000);

async function history(conn: string, q: Record<string, string | number>): Promise<History> {
  const qs = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]));
  const r = await http<History>(`${s.url}/api/app/connections/${conn}/history?${qs}`, { token: s.adminToken });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

beforeAll(async () => {
  s = await startServer({ monitorIntervalMs: HOUR });
  base = Math.floor((Date.now() - 4 * HOUR) / HOUR) * HOUR;
  id = await addConnection(s, { base_url: 'http://127.0.0.1:9', private_token: 'x', enabled: false });
  const m = monitor(s);
  const c = m.connections.get(id)!;
  databaseOf(s.server.ctx.store).tx(() => {
    for (let i = 0; i < N; i++) {
      m.record(c, tOf(i), metrics({ a: [backlogA(i), latencyA(i)], b: [backlogB(i), 1], c: [1, 0] }, { processed: 3 * i, failed: Math.floor(i / 10) }), '');
    }
  });
});
afterAll(async () => {
  await s.close();
});

function expectedAverages(step: number, from: number, to: number, bucketOf: (i: number) => number) {
  const sums = new Map<number, { n: number; a: number; la: number; b: number }>();
  for (let i = 0; i < N; i++) {
    const t = tOf(i);
    if (t < from || t > to) continue;
    const k = bucketOf(i);
    const e = sums.get(k) ?? { n: 0, a: 0, la: 0, b: 0 };
    e.n++;
    e.a += backlogA(i);
    e.la += latencyA(i);
    e.b += backlogB(i);
    sums.set(k, e);
  }
  return sums;
}

describe('history downsampling', () => {
  it('averages raw samples per bucket and never returns more than `points` buckets', async () => {
    const from = base + HOUR;
    const to = from + 30 * MIN - 1;
    const h = await history(id, { from, to, points: 50, queues: 'a,b' });
    expect(h.t.length).toBeLessThanOrEqual(50);
    expect(h.t.length).toBeGreaterThan(40);
    const step = h.step_ms;
    expect(step).toBeLessThan(MIN);
    const exp = expectedAverages(step, from, to, (i) => Math.floor(tOf(i) / step) * step);
    expect(h.t).toEqual([...exp.keys()]);
    h.t.forEach((t, k) => {
      const e = exp.get(t)!;
      expect(h.queues.a!.backlog[k]).toBeCloseTo(e.a / e.n, 2);
      expect(h.queues.a!.latency[k]).toBeCloseTo(e.la / e.n, 2);
      expect(h.queues.b!.backlog[k]).toBeCloseTo(e.b / e.n, 2);
    });
  });

  it('reads 1-minute rollups for long ranges with the same averages', async () => {
    const from = base;
    const to = base + 3 * HOUR;
    const h = await history(id, { from, to, points: 100, queues: 'a,b' });
    expect(h.t.length).toBeLessThanOrEqual(100);
    const step = h.step_ms;
    expect(step).toBeGreaterThanOrEqual(MIN);
    // Rows of a completed minute fall in the bucket of the minute's start; the open minute's raw rows by their own time.
    const lastMinute = Math.floor(tOf(N - 1) / MIN) * MIN;
    const exp = expectedAverages(step, from, to, (i) => {
      const t = tOf(i);
      const at = t >= lastMinute ? t : Math.floor(t / MIN) * MIN;
      return Math.floor(at / step) * step;
    });
    expect(h.t).toEqual([...exp.keys()]);
    h.t.forEach((t, k) => {
      const e = exp.get(t)!;
      expect(h.queues.a!.backlog[k]).toBeCloseTo(e.a / e.n, 2);
      expect(h.queues.b!.backlog[k]).toBeCloseTo(e.b / e.n, 2);
    });
    // counters: the bucket's last value
    expect(h.totals.processed.at(-1)).toBe(3 * (N - 1));
  });

  it('picks the top queues by peak backlog unless queues are named', async () => {
    const h = await history(id, { from: base, to: base + 3 * HOUR, points: 100, top: 2 });
    expect(h.queue_names).toEqual(['b', 'a', 'c']);
    expect(Object.keys(h.queues)).toEqual(['b', 'a']);
    const named = await history(id, { from: base, to: base + 3 * HOUR, points: 100, queues: 'c' });
    expect(Object.keys(named.queues)).toEqual(['c']);
    expect(named.queues.c!.backlog.every((v) => v === 1)).toBe(true);
  });

  it('computes rates from counter deltas', async () => {
    for (const points of [30, 1000]) {
      const h = await history(id, { from: base, to: base + 3 * HOUR, points });
      const rates = h.totals.processed_rate.filter((v) => v !== null);
      expect(rates.length).toBeGreaterThan(10);
      for (const r of rates) expect(r).toBeCloseTo(0.6, 3); // 3 jobs per 5 s
      const failed = h.totals.failed_rate.filter((v) => v !== null) as number[];
      const mean = failed.reduce((a, b) => a + b, 0) / failed.length;
      expect(mean).toBeCloseTo(0.02, 2); // 1 per 10 samples of 5 s
    }
  });

  it('counts a counter reset as a restart from zero, not a negative rate', async () => {
    const cid = await addConnection(s, { base_url: 'http://127.0.0.1:9', private_token: 'x', enabled: false });
    const m = monitor(s);
    const c = m.connections.get(cid)!;
    const t0 = base;
    for (let i = 0; i < 200; i++) {
      const processed = i < 100 ? 10 * i : 10 * (i - 100) + 10; // restarts at i = 100 and counts 10 at once
      m.record(c, t0 + i * 5000, metrics({ q: [0, 0] }, { processed, failed: 0 }), '');
    }
    const h = await history(cid, { from: t0, to: t0 + 200 * 5000, points: 40 });
    const rates = h.totals.processed_rate.filter((v) => v !== null);
    expect(rates.length).toBeGreaterThan(10);
    for (const r of rates) expect(r).toBe(2);
  });

  it('records failed samples as gaps with their error, not as zeros', async () => {
    const cid = await addConnection(s, { base_url: 'http://127.0.0.1:9', private_token: 'x', enabled: false });
    const m = monitor(s);
    const c = m.connections.get(cid)!;
    const t0 = base;
    for (let i = 0; i < 120; i++) {
      const t = t0 + i * 5000;
      if (i >= 40 && i < 80) m.record(c, t, null, '401 Unauthorized: check the token');
      else m.record(c, t, metrics({ q: [5, 1] }, { processed: i, failed: 0 }), '');
    }
    const h = await history(cid, { from: t0, to: t0 + 120 * 5000, points: 60 });
    const gapStart = t0 + 40 * 5000;
    const gapEnd = t0 + 80 * 5000;
    h.t.forEach((t, k) => {
      const inside = t >= gapStart && t + h.step_ms <= gapEnd;
      if (inside) {
        expect(h.queues.q!.backlog[k]).toBeNull();
        expect(h.totals.processed[k]).toBeNull();
      } else if (t + h.step_ms <= gapStart || t >= gapEnd) expect(h.queues.q!.backlog[k]).toBe(5);
    });
    expect(h.gaps.length).toBeGreaterThan(5);
    expect(h.gaps.every((g) => g.error === '401 Unauthorized: check the token' && g.t >= gapStart - h.step_ms && g.t < gapEnd)).toBe(true);
    // The rollup tier keeps the gap too.
    const coarse = await history(cid, { from: t0 - 2 * HOUR, to: t0 + 2 * HOUR, points: 100 });
    expect(coarse.step_ms).toBeGreaterThanOrEqual(MIN);
    expect(coarse.gaps.map((g) => g.error)).toContain('401 Unauthorized: check the token');
  });

  it('rejects a reversed range and bad points with a 400', async () => {
    for (const q of ['from=10&to=5', 'from=0&to=10&points=3', 'from=x&to=1', 'to=10']) {
      const r = await http(`${s.url}/api/app/connections/${id}/history?${q}`, { token: s.adminToken });
      expect(r.status, q).toBe(400);
      expect(r.body.message).toMatch(/^400/);
    }
    const missing = await http(`${s.url}/api/app/connections/nope/history?from=0&to=10`, { token: s.adminToken });
    expect(missing.status).toBe(404);
  });
});
