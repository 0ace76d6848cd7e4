// The failed samples a range counts are the same whatever the range: raw buckets that fold several
// failed samples, minutes rolled up with some failed samples among good ones, and minutes where
// every sample failed all count each failed sample, also after a restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import type { History } from '../../contract/app.ts';
import { addConnection, metrics, monitor } from './support.ts';
import { T, decodeSample } from '../../server/monitor/sample-codec.ts';

const HOUR = 3_600_000;
const MIN = 60_000;
let s: TestServer;
let id: string;
let t0: number;
const N = 2 * 720; // 2 h of 5 s samples
// Two failed samples in one otherwise good minute, one alone, a 15 s stretch of three, and a
// whole minute of twelve (t0 is on a minute, 1320 samples of 5 s are 110 minutes).
const FAILED = new Set([100, 101, 500, 1200, 1201, 1202, ...Array.from({ length: 12 }, (_, k) => 1320 + k)]);
const last = () => t0 + (N - 1) * 5000;

async function count(srv: TestServer, rangeMs: number, points: number): Promise<number> {
  const qs = new URLSearchParams({ from: String(last() - rangeMs), to: String(last()), points: String(points) });
  const r = await http<History>(`${srv.url}/api/app/connections/${id}/history?${qs}`, { token: srv.adminToken });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.gaps.reduce((sum, g) => sum + g.count, 0);
}

beforeAll(async () => {
  s = await startServer({ monitorIntervalMs: HOUR });
  t0 = Math.floor((Date.now() - 3 * HOUR) / MIN) * MIN;
  id = await addConnection(s, { base_url: 'http://127.0.0.1:9', private_token: 'x', enabled: false });
  const m = monitor(s);
  const c = m.connections.get(id)!;
  for (let i = 0; i < N; i++) {
    if (FAILED.has(i)) m.record(c, t0 + i * 5000, null, `ECONNREFUSED ${i}`);
    else m.record(c, t0 + i * 5000, metrics({ q: [1, 0] }, { processed: i, failed: 0 }), '');
  }
});
afterAll(async () => {
  await s.close();
});

describe('failed samples in range', () => {
  it('counts the same failed samples at every range and resolution, and after a restart', async () => {
    const ranges = [[2 * HOUR, 600], [2 * HOUR, 30], [3 * HOUR, 600], [6 * HOUR, 600], [24 * HOUR, 600], [7 * 24 * HOUR, 600]] as const;
    for (const [range, points] of ranges) expect(await count(s, range, points), `${range / HOUR} h at ${points} points`).toBe(FAILED.size);
    // The rollups are read back from storage as written.
    await s.close({ keepData: true });
    s = await startServer({ monitorIntervalMs: HOUR, dataDir: s.dataDir });
    for (const [range, points] of ranges) expect(await count(s, range, points), `after a restart: ${range / HOUR} h at ${points} points`).toBe(FAILED.size);
  });

  it('reads rows stored before the failed-sample count (ten totals) with none counted', () => {
    const old = new DataView(new ArrayBuffer(10 * 8 + 12));
    for (let i = 0; i < 10; i++) old.setFloat64(i * 8, i + 1, true);
    old.setUint32(80, 7, true);
    old.setFloat32(84, 3, true);
    old.setFloat32(88, 0.5, true);
    const { tot, queues } = decodeSample(new Uint8Array(old.buffer));
    expect(Array.from(tot)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0]);
    expect(queues).toEqual([7, 3, 0.5]);
    expect(tot[T.failedSamples]).toBe(0);
  });
});
