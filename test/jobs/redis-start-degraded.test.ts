// `serve --redis` whose Redis is down at start: refused (nothing on the port), frozen (SIGSTOP:
// the port accepts, nothing answers) or absent (a host that does not resolve). The server listens
// anyway, its status says the job system is degraded and why, job routes answer 503 with
// Retry-After, and once Redis answers the job system runs without a restart. Nothing in its output
// is an unhandled client error or a serialized client.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startRedis, type TestRedis } from '../helpers/redis.ts';
import { tempDir } from '../helpers/server.ts';
import { http } from '../helpers/http.ts';
import { metrics, spawnServe, type Child } from './lib.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'degraded-start-admin-token';
const dirs: string[] = [];
const children: Child[] = [];
const redises: TestRedis[] = [];

afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
  for (const r of redises) await r.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

async function serveOn(redisUrl: string): Promise<{ child: Child; dataDir: string }> {
  const dataDir = tempDir('jobscope-degraded-');
  dirs.push(dataDir);
  const child = await spawnServe(dataDir, TOKEN, ['--log-level', 'info', '--redis', redisUrl, '--job-poll-ms', '50', '--redis-beat-ms', '200']);
  children.push(child);
  return { child, dataDir };
}

type Status = { job_system: { state: 'ok' | 'degraded'; message?: string } };
const status = async (url: string) => (await http(`${url}/api/app/status`, { token: TOKEN })).body as Status;
const enqueue = (url: string) => http(`${url}/api/v3/sim/jobs`, { json: { queue: 'default', count: 1 }, token: TOKEN });

async function expectDegraded(url: string, reason: RegExp): Promise<void> {
  // Degraded from the listening on ("connecting" while the first try is out), with the reason once known.
  expect((await status(url)).job_system.state).toBe('degraded');
  const s = await waitFor(`status with ${reason}`, async () => {
    const now = await status(url);
    return reason.test(now.job_system.message ?? '') ? now : undefined;
  }, 15_000, 100);
  expect(s.job_system.state).toBe('degraded');
  for (const r of [await enqueue(url), await http(`${url}/api/v3/sim/jobs/queues`, { token: TOKEN }), await http(`${url}/api/v4/sidekiq/compound_metrics`, { token: TOKEN })]) {
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((r.body as { message: string }).message).toMatch(/Redis is unreachable/);
  }
}

async function expectRecovered(url: string): Promise<void> {
  await waitFor('the job system up', async () => (await status(url)).job_system.state === 'ok', 30_000, 100);
  expect((await enqueue(url)).status).toBe(202);
  await waitFor('the job ran', async () => (await metrics(url, TOKEN, 'job_stats')).jobs.processed >= 1, 20_000, 100);
}

function expectCleanOutput(child: Child, dataDir: string): void {
  const log = fs.readdirSync(path.join(dataDir, 'logs')).map((f) => fs.readFileSync(path.join(dataDir, 'logs', f), 'utf8')).join('');
  const { stdout, stderr } = child.output();
  for (const text of [log, stdout, stderr]) {
    expect(text).not.toContain('Unhandled error event');
    expect(text).not.toContain('[Circular]');
  }
  // The outage is logged once when noticed, once when over: not at every retry.
  expect(log.match(/job Redis unreachable/g)?.length ?? 0).toBeLessThanOrEqual(1);
}

describe('serve --redis with its Redis down at start', () => {
  it('refused: listens, degraded with the sentence, 503s; runs jobs once Redis is started, without a restart', async () => {
    const port = await freePort();
    const { child, dataDir } = await serveOn(`redis://127.0.0.1:${port}/0`);
    await expectDegraded(child.url, new RegExp(`waiting for Redis at 127\\.0\\.0\\.1:${port}: connection refused`));
    redises.push(await startRedis([], { port }));
    await expectRecovered(child.url);
    expectCleanOutput(child, dataDir);
    expect(fs.readFileSync(path.join(dataDir, 'logs', 'jobscope.log'), 'utf8')).toMatch(/job Redis reachable again/);
  });

  it('frozen (SIGSTOP): listens, degraded ("no answer"), 503s; runs jobs once Redis is resumed', async () => {
    const redis = await startRedis();
    redises.push(redis);
    redis.pause();
    const { child, dataDir } = await serveOn(redis.url);
    try {
      await expectDegraded(child.url, /waiting for Redis at 127\.0\.0\.1:\d+: no answer from Redis/);
    } finally {
      redis.resume();
    }
    await expectRecovered(child.url);
    expectCleanOutput(child, dataDir);
  });

  it('refusing the credentials (NOAUTH): listens, degraded with the sentence saying where the password goes, 503s', async () => {
    const redis = await startRedis(['--requirepass', 'the-password']);
    redises.push(redis);
    const { child, dataDir } = await serveOn(redis.url);
    await expectDegraded(child.url, /waiting for Redis at 127\.0\.0\.1:\d+: Redis at 127\.0\.0\.1:\d+ wants a password \(NOAUTH\)/);
    expectCleanOutput(child, dataDir);
  });

  it('absent (the host does not resolve): listens, degraded with the DNS sentence, 503s, and stops cleanly', async () => {
    const { child, dataDir } = await serveOn('redis://no-such-redis-host.invalid:6379/0');
    await expectDegraded(child.url, /waiting for Redis at no-such-redis-host\.invalid:6379: host no-such-redis-host\.invalid not found/);
    child.proc.kill('SIGTERM');
    expect(await child.exited).toBe(0);
    expectCleanOutput(child, dataDir);
  });
});
