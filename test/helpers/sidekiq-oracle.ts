// Runs test/helpers/sidekiq-oracle.rb (Debian's ruby-sidekiq 6.4) and parses Sidekiq's own view.
// Also pushes jobs with Sidekiq's real client, so tests seed Redis exactly as an app would.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ORACLE = path.join(import.meta.dirname, 'sidekiq-oracle.rb');

export interface OracleView {
  now: number;
  stats: { processed: number; failed: number; enqueued: number; scheduled_size: number; retry_size: number; dead_size: number; processes_size: number };
  /** latency_from/latency_to: the oracle's clock just before and after it read `latency`. */
  queues: { name: string; size: number; latency: number; latency_from: number; latency_to: number }[];
  processes: {
    identity: string;
    hostname: string;
    pid: number;
    tag: string;
    started_at: number;
    queues: string[];
    labels: string[];
    concurrency: number;
    busy: number;
    beat: number;
    quiet: boolean;
    /** `started_at` as GitLab's process_metrics prints it (Time.at(started_at) as JSON). */
    started_at_gitlab: string;
  }[];
  /** Sidekiq::Workers (the Busy page's jobs), the payload read as Web's busy.erb reads it. */
  workers: { process: string; thread: string; queue: string; run_at: number; jid: string; class: string; args: unknown[] }[];
  /** Sidekiq::Workers#size: the processes' `busy` summed. */
  workers_size: number;
  retry_size: number;
  scheduled_size: number;
  dead_size: number;
  history: { processed: Record<string, number>; failed: Record<string, number> };
}

export async function sidekiqView(redisUrl: string, days = 7): Promise<OracleView> {
  const { stdout } = await run('ruby', [ORACLE, redisUrl, String(days)], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as OracleView;
}

/** Runs Ruby with sidekiq loaded and the client pointed at `redisUrl`; `code` sees `Sidekiq::Client`. */
export async function sidekiqRuby(redisUrl: string, code: string): Promise<string> {
  const prelude = 'require "sidekiq"; require "sidekiq/api"; Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=); ' +
    `Sidekiq.configure_client { |c| c.redis = { url: ${JSON.stringify(redisUrl)} } }; `;
  const { stdout } = await run('ruby', ['-e', prelude + code], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}
