// The demo's simulated worker processes look like real Sidekiq processes in process_metrics: each
// has its own pid (not the server's) and a start time before the demo began, as processes that were
// already running when someone opened the dashboard. Both come from the demo's seed: the same seed
// gives the same processes, another seed other ones. On both stores (test/api/
// backends.ts): with a database the server's own entry is its heartbeat in the job tables and the
// demo's processes are added from memory (JobSystem.read()), so the two must still come out apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { eachBackend } from '../api/backends.ts';
import { http } from '../helpers/http.ts';
import { ManualClock } from '../../server/clock.ts';

interface Proc {
  hostname: string;
  pid: number;
  started_at: string;
  labels: string[];
}

const T0 = 1_700_000_000_000;
const SETTINGS = { processes: 6, concurrency: 2, queues: 3, rate: 0, burst_every_s: 0 };

eachBackend((startServer) => {
  let s: TestServer;
  const clock = new ManualClock(T0);
  beforeAll(async () => {
    s = await startServer({ monitorIntervalMs: 3_600_000, stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0 }, { clock });
  });
  afterAll(async () => s?.close());

  const load = (init?: Parameters<typeof http>[1]) => http(`${s.url}/api/v3/sim/load`, { token: s.adminToken, ...init });

  /** The simulated processes process_metrics reports while the demo runs with this seed. */
  async function simulated(seed: number): Promise<Proc[]> {
    expect((await load({ method: 'PUT', json: { ...SETTINGS, seed } })).status).toBe(200);
    const r = await http<{ processes: Proc[] }>(`${s.url}/api/v3/sidekiq/process_metrics`, { token: s.adminToken });
    expect(r.status).toBe(200);
    expect((await load({ method: 'DELETE' })).status).toBe(200);
    return r.body.processes.filter((p) => p.labels.includes('simulated'));
  }

  describe('demo processes in process_metrics', () => {
    it('each has its own plausible pid and a start time before the demo started, from the seed', async () => {
      const a = await simulated(42);
      expect(a).toHaveLength(6);
      const pids = a.map((p) => p.pid);
      expect(new Set(pids).size).toBe(6);
      for (const p of a) {
        expect(p.pid).not.toBe(process.pid); // the test server runs in this process
        expect(Number.isInteger(p.pid)).toBe(true);
        expect(p.pid).toBeGreaterThanOrEqual(300); // past the kernel's reserved low pids
        expect(p.pid).toBeLessThanOrEqual(4_194_304); // Linux's pid_max ceiling
        const started = Date.parse(p.started_at);
        expect(started).toBeLessThan(T0);
        expect(started).toBeGreaterThan(T0 - 30 * 86_400_000);
      }
      expect(new Set(a.map((p) => Date.parse(p.started_at))).size).toBeGreaterThan(1);

      const again = await simulated(42);
      expect(again.map((p) => [p.hostname, p.pid, p.started_at])).toEqual(a.map((p) => [p.hostname, p.pid, p.started_at]));
      const other = await simulated(7);
      expect(other.map((p) => p.pid)).not.toEqual(pids);
    });

    it('leaves the server’s own process with the server’s pid', async () => {
      const r = await http<{ processes: Proc[] }>(`${s.url}/api/v3/sidekiq/process_metrics`, { token: s.adminToken });
      const own = r.body.processes.filter((p) => !p.labels.includes('simulated'));
      expect(own.map((p) => p.pid)).toEqual([process.pid]);
    });
  });
});
