// Helpers shared by the job system and metrics tests: metrics reads, jobs posted through the API,
// and a `jobscope serve` child process for the kill -9 test.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { http } from '../helpers/http.ts';
import { jobscopeNodeArgs } from '../helpers/cli-process.ts';
import { waitFor } from '../helpers/wait.ts';
import { sidekiqRuby, warmOracle } from '../helpers/sidekiq-oracle.ts';
import { Redis } from 'ioredis';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A server's settings for a job system on Redis: the builds' periodic jobs off (they would add queues
 * and jobs), a fast poll, and busy slots reaching Redis with a heartbeat every 0.1 s instead of 5 s,
 * so waits for them end at once.
 */
export const onRedis = (redisUrl: string) => ({ redisUrl, stuckBuildsEveryMs: 0, artifactExpiryEveryMs: 0, runnerContactEveryMs: 0, jobPollMs: 50, redisBeatMs: 100 });

export async function metrics(url: string, token: string, endpoint: string, prefix = '/api/v4/sidekiq') {
  const r = await http(`${url}${prefix}/${endpoint}`, { token });
  if (r.status !== 200) throw new Error(`${endpoint}: ${r.status} ${r.raw.toString()}`);
  return r.body;
}

export async function postJobs(url: string, token: string, body: Record<string, unknown>) {
  const r = await http(`${url}/api/v3/sim/jobs`, { json: body, token });
  if (r.status !== 202) throw new Error(`POST jobs: ${r.status} ${r.raw.toString()}`);
  return r.body as { queue: string; enqueued: number; backlog: number };
}

export interface Child {
  proc: ChildProcess;
  url: string;
  exited: Promise<number | null>;
  /** Everything the child wrote to stdout and stderr so far. */
  output(): { stdout: string; stderr: string };
}

/** `jobscope serve` in a child process; resolves once it prints its listening line. */
export async function spawnServe(dataDir: string, adminToken: string, extra: string[] = []): Promise<Child> {
  const proc = spawn(
    process.execPath,
    [...(await jobscopeNodeArgs()), 'serve', '--port', '0', '--data-dir', dataDir, '--admin-token', adminToken, '--log-level', 'silent', ...extra],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`server did not start in 20 s:\n${err}`));
    }, 20_000);
    let listening = false;
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Jobscope listening on (http:\/\/\S+)/.exec(out);
      if (m && !listening) {
        listening = true;
        clearTimeout(timer);
        resolve({ proc, url: m[1]!, exited, output: () => ({ stdout: out, stderr: err }) });
      }
    });
    proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${err}`));
    });
  });
}

/**
 * On a job system on Redis: Retry now (`retryNow`) on the only retry set entry; the job, run and
 * failed again, is back in the retry set with the count Sidekiq's SortedEntry#retry leaves
 * (`retryCount`). Its retry is then made due at once (its score moved to now, as time passing
 * would), so that the scheduler, not a hand, moves it next.
 */
export async function retryNowThenDue(redisUrl: string, retryNow: () => Promise<void>, retryCount: number): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    const [before] = await redis.zrange('retry', '0', '-1');
    await retryNow();
    const [member] = await waitFor(
      `the job back in the retry set with retry_count ${retryCount}`,
      async () => {
        const members = await redis.zrange('retry', '0', '-1');
        return members.length === 1 && members[0] !== before && (JSON.parse(members[0]!) as { retry_count?: unknown }).retry_count === retryCount ? members : undefined;
      },
      10_000,
      50,
    );
    await redis.zadd('retry', 'XX', String(Date.now() / 1000), member!);
  } finally {
    redis.disconnect();
  }
}

/**
 * Runs `ruby` in the oracle after a prelude giving it Sidekiq's own JobRetry as `r`, the time as
 * `now`, and as `job` a FlakyJob payload (retry: 3) to fail through it; answers what it prints, as JSON.
 */
export async function flakyJobInSidekiq<T>(redisUrl: string, ruby: string): Promise<T> {
  warmOracle();
  const out = await sidekiqRuby(
    redisUrl,
    `require "sidekiq/job_retry"
     r = Sidekiq::JobRetry.new
     now = Time.now.to_f
     job = Sidekiq.dump_json("class" => "FlakyJob", "queue" => "flaky", "args" => [{}], "jid" => "f" * 24, "retry" => 3, "created_at" => now, "enqueued_at" => now)
     ${ruby}`,
  );
  return JSON.parse(out) as T;
}
