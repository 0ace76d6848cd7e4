// retry_count as Sidekiq 6.4 counts it, differentially: a job failing four times with retry: 3 is
// failed through Sidekiq's own JobRetry (job_retry.rb, in the oracle's Ruby; each retry's payload runs
// again as the scheduler moves it back, unchanged), and through the embedded job system on SQLite and
// on Redis (`serve --redis`), whose retries come due on their own. After each failure the entry's
// set and retry_count must be Sidekiq's, in the control API and, on Redis, in the payload Sidekiq's
// tools read (with retried_at present exactly when Sidekiq writes it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers/redis.ts';
import { useServers } from '../helpers/server-set.ts';
import type { TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { waitFor } from '../helpers/wait.ts';
import { flakyJobInSidekiq, onRedis, postJobs } from './lib.ts';

type Step = { set: 'retry' | 'dead'; retry_count: number | null; retried_at?: boolean };

const redis = useRedis();
let sidekiq: Step[];

beforeAll(async () => {
  sidekiq = await flakyJobInSidekiq<Step[]>(
    redis.url,
    `steps = []
     4.times do
       begin
         r.global(job, "flaky") { raise "boom" }
       rescue Sidekiq::JobRetry::Handled
       end
       if (e = Sidekiq::RetrySet.new.first)
         steps << { "set" => "retry", "retry_count" => e.item["retry_count"], "retried_at" => e.item.key?("retried_at") }
         job = e.value
         e.delete
       else
         d = Sidekiq::DeadSet.new.first
         steps << { "set" => "dead", "retry_count" => d.item["retry_count"], "retried_at" => d.item.key?("retried_at") }
       end
     end
     print JSON.generate(steps)`,
  );
  await redis.client.flushdb();
});

type Entry = { key: string; queue: string; retry_count: number };
const list = async (s: TestServer, set: 'retries' | 'dead') =>
  ((await http(`${s.url}/api/v3/sim/jobs/${set}?per_page=1000`, { token: s.adminToken })).body as Entry[]).filter((j) => j.queue === 'flaky');

/** Each failure as the control API shows it (a retry entry's key changes with each failure), until the job dies. */
async function failures(s: TestServer, payload?: () => Promise<{ retry_count: unknown; retried_at: boolean } | undefined>): Promise<Step[]> {
  await postJobs(s.url, s.adminToken, { queue: 'flaky', class: 'FlakyJob', fail: true, retry: 3 });
  const steps: Step[] = [];
  let lastKey = '';
  await waitFor(
    () => `the job to die (seen: ${JSON.stringify(steps)})`,
    async () => {
      const [retry] = await list(s, 'retries');
      if (retry && retry.key !== lastKey) {
        lastKey = retry.key;
        const raw = await payload?.();
        steps.push({ set: 'retry', retry_count: retry.retry_count, ...(raw ? { retried_at: raw.retried_at } : {}) });
        if (raw) expect(raw.retry_count).toBe(retry.retry_count);
      }
      const [dead] = await list(s, 'dead');
      if (!dead) return false;
      const raw = await payload?.();
      steps.push({ set: 'dead', retry_count: dead.retry_count, ...(raw ? { retried_at: raw.retried_at } : {}) });
      if (raw) expect(raw.retry_count).toBe(dead.retry_count);
      return true;
    },
    60_000,
  );
  return steps;
}

// Backoff "seconds" of 100 ms: each retry waits 1.5 to 6 s, long enough to be seen between failures.
const FAST = { jobBackoffUnitMs: 100, jobPollMs: 50, stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0 };

describe('retry_count after 1, 2, 3 and 4 failures (retry: 3), as Sidekiq 6.4 counts it', () => {
  it('Sidekiq itself: 0, 1, 2 in the retry set (retried_at from the second failure), then 3 in the dead set', () => {
    expect(sidekiq).toEqual([
      { set: 'retry', retry_count: 0, retried_at: false },
      { set: 'retry', retry_count: 1, retried_at: true },
      { set: 'retry', retry_count: 2, retried_at: true },
      { set: 'dead', retry_count: 3, retried_at: true },
    ]);
  });

  describe('the embedded job system on SQLite', () => {
    const servers = useServers(FAST, 'all');
    it('shows Sidekiq’s counts', async () => {
      const s = await servers.start();
      const strip = (steps: Step[]) => steps.map(({ set, retry_count }) => ({ set, retry_count }));
      expect(strip(await failures(s))).toEqual(strip(sidekiq));
    });
  });

  describe('the embedded job system on Redis (serve --redis)', () => {
    const servers = useServers(() => ({ ...onRedis(redis.url), ...FAST }), 'all');
    afterAll(async () => {
      await servers.closeAll();
      await redis.client.flushdb();
    });
    it('shows and stores Sidekiq’s counts, retried_at as Sidekiq writes it', async () => {
      const s = await servers.start();
      const payload = async () => {
        const raw = (await redis.client.zrange('retry', '0', '-1'))[0] ?? (await redis.client.zrange('dead', '0', '-1'))[0];
        if (!raw) return undefined;
        const p = JSON.parse(raw) as Record<string, unknown>;
        return { retry_count: p.retry_count, retried_at: 'retried_at' in p };
      };
      expect(await failures(s, payload)).toEqual(sidekiq);
    });
  });
});
