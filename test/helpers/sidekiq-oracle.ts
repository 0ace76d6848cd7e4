// Runs test/helpers/sidekiq-oracle.rb (Debian's ruby-sidekiq 6.4) and parses Sidekiq's own view.
// Also pushes jobs with Sidekiq's real client, so tests seed Redis exactly as an app would.
// One long-lived `ruby sidekiq-oracle.rb --serve` per test worker answers every call in turn: a Ruby
// started per call cost ~0.2 s of CPU and over a second of wall time on a loaded machine, so a poll
// every 100 ms really polled every second or two and spent the CPU the servers under test needed.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ORACLE = path.join(import.meta.dirname, 'sidekiq-oracle.rb');

type Answer = { ok: true; out: unknown } | { ok: false; error: string };

/** The oracle process; its handles are unref'd while idle so it never keeps a test worker alive
 *  (it ends when the worker does: its stdin closes). */
class Oracle {
  private readonly child: ChildProcess;
  private readonly waiting: { resolve(a: Answer): void; reject(e: Error): void }[] = [];
  private buffered = '';
  private stderr = '';
  dead = false;

  constructor() {
    this.child = spawn('ruby', [ORACLE, '--serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => this.read(d));
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => (this.stderr = (this.stderr + d).slice(-4000)));
    this.child.stdin!.on('error', () => undefined); // a dead oracle is reported by 'exit' below
    this.child.once('exit', (code, signal) => {
      this.dead = true;
      const err = new Error(`sidekiq-oracle.rb --serve exited (${code ?? signal}):\n${this.stderr}`);
      for (const w of this.waiting.splice(0)) w.reject(err);
      this.hold(false);
    });
    this.hold(false);
  }

  private hold(on: boolean): void {
    for (const h of [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as ({ ref(): void; unref(): void } | null)[]) {
      if (on) h?.ref();
      else h?.unref();
    }
  }

  private read(d: string): void {
    this.buffered += d;
    for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      this.waiting.shift()?.resolve(JSON.parse(line) as Answer);
      if (this.waiting.length === 0) this.hold(false);
    }
  }

  async ask(req: Record<string, unknown>): Promise<unknown> {
    const answer = new Promise<Answer>((resolve, reject) => this.waiting.push({ resolve, reject }));
    this.hold(true);
    this.child.stdin!.write(JSON.stringify(req) + '\n');
    const a = await answer;
    if (!a.ok) throw new Error(`sidekiq-oracle.rb: ${a.error}`);
    return a.out;
  }
}

let oracle: Oracle | null = null;
function running(): Oracle {
  if (!oracle || oracle.dead) oracle = new Oracle();
  return oracle;
}
const ask = (req: Record<string, unknown>) => running().ask(req);

/** Starts the oracle process now (beforeAll, next to starting Redis) so that loading Ruby and Sidekiq
 *  overlaps the setup instead of delaying a test's first look; calls made earlier wait for it anyway. */
export function warmOracle(): void {
  running();
}

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
  return (await ask({ op: 'view', url: redisUrl, days })) as OracleView;
}

/** Runs Ruby with sidekiq loaded and the client pointed at `redisUrl`; `code` sees `Sidekiq::Client`;
 *  answers what it printed. Its local variables are its own. */
export async function sidekiqRuby(redisUrl: string, code: string): Promise<string> {
  return (await ask({ op: 'ruby', url: redisUrl, code })) as string;
}

const FIXTURE_APP = path.join(import.meta.dirname, '..', 'fixtures', 'sidekiq');

/**
 * A real `sidekiq` running the fixture app (test/fixtures/sidekiq/workers.rb) on `redisUrl`; `args`
 * are Sidekiq's own (-q, -c, -g, -C). It beats every 0.1 s instead of 5 s (SIDEKIQ_BEAT_PAUSE_S) so
 * that counts, busy and quiet reach Redis at once; `sidekiqConfig` is the fixture's sidekiq.yml.
 */
export function startSidekiqApp(redisUrl: string, args: string[]): ChildProcess {
  return spawn('sidekiq', ['-r', path.join(FIXTURE_APP, 'workers.rb'), ...args], {
    env: { ...process.env, REDIS_URL: redisUrl, SIDEKIQ_BEAT_PAUSE_S: '0.1' },
    stdio: 'ignore',
  });
}

export const sidekiqConfig = path.join(FIXTURE_APP, 'sidekiq.yml');
