// A hostile, huge or frozen Redis fails only its own connection. A server (real HTTP, real port)
// watches a hostile RESP server (test/helpers/hostile-redis.ts) that announces 2^31 elements or a
// 600 MB string: the sample fails with a sentence naming what was too large and the setting that
// raises it, the process's memory barely moves, and the server answers other requests meanwhile.
// A real redis-server under SIGSTOP: the Test and peek routes answer 503 with Retry-After within
// the timeout, the sampler records a failed sample, and after SIGCONT the next sample succeeds.
// The --redis job backend's client has a command timeout too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { startRedis } from '../helpers/redis.ts';
import { startHostileRedis, type Hostility } from '../helpers/hostile-redis.ts';
import { monitor } from '../monitor/support.ts';
import type { ConnectionView } from '../../contract/app.ts';
import { openRedisJobBackend } from '../../server/store/redis/job-backend.ts';

const TIMEOUT_MS = 1500;
let s: TestServer;

beforeAll(async () => {
  s = await startServer({ monitorIntervalMs: 3_600_000, mode: 'test', sidekiqTimeoutMs: TIMEOUT_MS });
}, 60_000);
afterAll(async () => {
  await s?.close();
});

const api = (p: string, opts: Parameters<typeof http>[1] = {}) => http(`${s.url}/api/app${p}`, { token: s.adminToken, ...opts });

async function addSidekiq(url: string): Promise<ConnectionView> {
  const r = await api('/connections', { json: { name: 'sidekiq', kind: 'sidekiq', redis_url: url } });
  if (r.status !== 201) throw new Error(`add: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as ConnectionView;
}

const lastError = async (id: string) => ((await api('/connections')).body as ConnectionView[]).find((x) => x.id === id)!.last_error;

describe('a hostile Redis', () => {
  const cases: [Hostility, RegExp][] = [
    ['huge-array', /^Redis at 127\.0\.0\.1:\d+: a Redis reply announced 2147483648 elements, past the bound of 1000000 \(--redis-max-reply-elements raises it\); the connection was dropped$/],
    ['huge-bulk', /^Redis at 127\.0\.0\.1:\d+: a Redis reply of more than 572\.2 MiB was refused: the bound is 64 MiB \(--redis-max-reply-mb raises it\); the connection was dropped$/],
  ];
  for (const [mode, sentence] of cases) {
    it(`${mode}: the sample fails with a sentence saying what was too large, memory stays flat, other requests are answered`, async () => {
      const hostile = await startHostileRedis(mode);
      try {
        const c = await addSidekiq(hostile.url);
        const rss0 = process.memoryUsage().rss;
        let peak = rss0;
        const watch = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
        let sampled = false;
        const sampling = monitor(s)
          .sampleNow(c.id)
          .then(() => (sampled = true));
        // Requests from others while the hostile read is under way: all answered.
        let answered = 0;
        do {
          const r = await api('/connections');
          expect(r.status).toBe(200);
          answered++;
        } while (!sampled);
        await sampling;
        clearInterval(watch);
        expect(answered).toBeGreaterThan(0);
        expect(await lastError(c.id)).toMatch(sentence);
        expect(peak - rss0).toBeLessThan(100 * 2 ** 20);
        // The failed sample is in the history as a gap with the sentence.
        const h = await api(`/connections/${c.id}/history?from=${Date.now() - 60_000}&to=${Date.now() + 60_000}`);
        expect(JSON.stringify(h.body)).toMatch(/--redis-max-reply-/);
        await api(`/connections/${c.id}`, { method: 'DELETE' });
      } finally {
        await hostile.close();
      }
    }, 30_000);
  }

  it('frozen (answers nothing): the Test route answers 503 with Retry-After within the timeout', async () => {
    const hostile = await startHostileRedis('frozen');
    try {
      const started = Date.now();
      const t = await api('/connections/test', { json: { name: 'x', kind: 'sidekiq', redis_url: hostile.url } });
      expect(t.status).toBe(503);
      expect(Number(t.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(t.body.message).toMatch(/no answer from Redis at 127\.0\.0\.1:\d+ within 1\.5 s/);
      // Within the timeout and its own overhead: not the 45 s a client without one waited.
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 5000);
    } finally {
      await hostile.close();
    }
  }, 30_000);
});

describe('a real Redis under SIGSTOP', () => {
  it('the Test and peek routes answer 503 + Retry-After, the sample fails; after SIGCONT the next sample succeeds', async () => {
    const redis = await startRedis();
    try {
      const c = await addSidekiq(redis.url);
      await monitor(s).sampleNow(c.id);
      expect(await lastError(c.id)).toBeNull();
      redis.pause();
      const test = await api(`/connections/${c.id}/test`, { method: 'POST' });
      expect(test.status).toBe(503);
      expect(test.headers.get('retry-after')).toBe('2');
      expect(test.body.message).toMatch(/no answer from Redis at 127\.0\.0\.1:\d+ within 1\.5 s/);
      for (const path of ['/sidekiq/queues/default', '/sidekiq/sets/retry']) {
        const peek = await api(`/connections/${c.id}${path}`);
        expect(peek.status, path).toBe(503);
        expect(peek.headers.get('retry-after'), path).toBe('2');
        expect(peek.body.message, path).toMatch(/no answer from Redis/);
      }
      await monitor(s).sampleNow(c.id);
      expect(await lastError(c.id)).toMatch(/^no answer from Redis/);
      redis.resume();
      await monitor(s).sampleNow(c.id);
      expect(await lastError(c.id)).toBeNull();
    } finally {
      await redis.stop();
    }
  }, 60_000);

  it('the --redis job backend: a command to a frozen Redis fails at the command timeout instead of hanging', async () => {
    const redis = await startRedis();
    const backend = await openRedisJobBackend({ url: redis.url, processTtlS: 60, now: Date.now, kindOf: () => undefined, maxQueuesRead: 100, bounds: { commandTimeoutMs: 500, maxBytes: 2 ** 20, maxElements: 1000 } });
    try {
      // recover() is what connects it, as at a server's start.
      await backend.recover();
      expect(await backend.deadSize()).toBe(0);
      redis.pause();
      // A 503's StorageError naming the bound, not a hang.
      await expect(backend.deadSize()).rejects.toThrow(/no answer from Redis at 127\.0\.0\.1:\d+ within 0\.5 s: .*raise --redis-command-timeout-ms/);
      redis.resume();
      // The timed-out call cost the connection; the backend reconnects by itself and answers again.
      const until = Date.now() + 15_000;
      for (;;) {
        const n = await backend.deadSize().catch(() => null);
        if (n === 0) break;
        if (Date.now() > until) throw new Error('the backend did not answer again after SIGCONT');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      redis.resume();
      await backend.leave().catch(() => undefined);
      await redis.stop();
    }
  }, 30_000);
});
