// The demo load runs on the job system's clock: no time passing means no arrivals, ten seconds moved
// by hand give ten seconds of its arrival curve, and the same settings give the same on two servers.
import { describe, expect, it } from 'vitest';
import { useServers } from '../helpers/server-set.ts';
import { http } from '../helpers/http.ts';
import { ManualClock } from '../../server/clock.ts';

const servers = useServers({}, 'all');

const SETTINGS = { processes: 2, concurrency: 2, queues: 3, rate: 40, wave: 0.5, period_s: 4, duration_ms: 5, failure_rate: 0, burst_every_s: 2, burst_size: 7 };

/** Starts the demo with `seed`, moves the clock 10 s in steps and returns how many jobs it generated. */
async function generated(seed: number): Promise<{ before: number; after: number }> {
  const clock = new ManualClock(1_700_000_000_000);
  const s = await servers.start({ monitorIntervalMs: 3_600_000, stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0 }, { clock });
  const load = (init?: Parameters<typeof http>[1]) => http(`${s.url}/api/v3/sim/load`, { token: s.adminToken, ...init });
  expect((await load({ method: 'PUT', json: { ...SETTINGS, seed } })).status).toBe(200);
  const before = (await load()).body.generated as number;
  for (let i = 0; i < 100; i++) clock.advance(100);
  const after = (await load()).body.generated as number;
  await load({ method: 'DELETE' });
  return { before, after };
}

describe('demo load on the job system clock', () => {
  it('generates nothing until the clock moves, then follows the moved time; the same settings replay the same', async () => {
    const a = await generated(7);
    const b = await generated(7);
    expect(a.before).toBe(0);
    // ∫ 40·(1 + 0.5·sin(2πt/4)) dt over 10 s = 400 + 80/π ≈ 425.5 arrivals, plus bursts of 7 at 2, 4, 6, 8
    // and 10 s = 35: about 460 (each tick rounds with a random draw, carried over, so ±a few).
    expect(a.after).toBeGreaterThanOrEqual(452);
    expect(a.after).toBeLessThanOrEqual(468);
    expect(b).toEqual(a);
  });
});
