// The demo load generator: simulated worker processes (labelled "simulated") and synthetic queues
// with an arrival rate that swells and ebbs, random job durations, failures and bursts, so the
// metrics show backlog building and draining, latency rising and workers saturating. Its jobs run
// through the same queues and pools as real ones, but in memory-backed queues: nobody needs them
// after a restart, and two store writes per demo job would only slow the demo down. Seeded, so a
// given setting replays the same arrivals.
import type { Service } from '../lifecycle.ts';
import type { Cancel, Clock } from '../clock.ts';
import { Prng, seededRandom } from '../util/prng.ts';
import type { JobQueue } from './queue.ts';
import type { PoolIdentity, WorkerPool } from './worker-pool.ts';
import { SYNTHETIC } from './builtin/synthetic.ts';

/** What the demo needs of a job system (the embedded one): memory queues, pools and memory jobs. */
export interface DemoHost {
  readonly clock: Clock;
  /** Undefined when a durable queue has that name. */
  memoryQueue(name: string): JobQueue | undefined;
  removeMemoryQueue(name: string): void;
  addPool(identity: PoolIdentity, queues: JobQueue[]): WorkerPool;
  removePool(pool: WorkerPool): void;
  enqueueMemory(queue: JobQueue, kind: string, cls: string, args: Record<string, unknown>): void;
}

export interface LoadSettings {
  processes: number;
  concurrency: number;
  queues: number;
  /** Mean arrivals per second over all demo queues. */
  rate: number;
  /** Amplitude (0–1) of the slow swell of the rate. */
  wave: number;
  period_s: number;
  /** Mean job duration (exponentially distributed). */
  duration_ms: number;
  failure_rate: number;
  /** A burst of `burst_size` jobs lands in one queue this often; 0 = no bursts. */
  burst_every_s: number;
  burst_size: number;
  seed: number;
}

// About 75 jobs/s of capacity against a rate swinging between 24 and 96: saturated at each crest,
// idle-ish in each trough, plus a burst every 20 s.
export const DEFAULT_LOAD: LoadSettings = {
  processes: 6,
  concurrency: 5,
  queues: 8,
  rate: 60,
  wave: 0.6,
  period_s: 60,
  duration_ms: 400,
  failure_rate: 0.03,
  burst_every_s: 20,
  burst_size: 150,
  seed: 42,
};

const NAMES = [
  'default', 'mailers', 'pipeline_processing', 'post_receive', 'project_cache', 'repository_import',
  'git_garbage_collect', 'elastic_indexer', 'web_hook', 'new_note', 'merge', 'build',
];

const TICK_MS = 100;
const PROCESS_QUEUES_CAP = 10;

const className = (queue: string) => queue.replace(/(^|_)([a-z0-9])/g, (_m, _u, c: string) => c.toUpperCase()) + 'Worker';

/**
 * A pid and a start time for each simulated process, as real Sidekiq processes have: each its own pid
 * (they once all showed the server's), started a while before the demo, hosts booted at different
 * times. Drawn from their own generator of the seed, so the arrivals' sequence does not shift.
 */
export function processPasts(seed: number, count: number, now: number): { pid: number; startedAt: number }[] {
  const rng = new Prng(seed).fork(0x5eed_0b1d);
  const used = new Set<number>();
  const out: { pid: number; startedAt: number }[] = [];
  for (let p = 0; p < count; p++) {
    // Above the low pids system daemons take at boot, within the classic 32768 pid_max.
    let pid = rng.int(1200, 32_000);
    while (used.has(pid)) pid = pid >= 32_000 ? 1200 : pid + 1;
    used.add(pid);
    // Between 10 minutes and 3 days ago, to the millisecond.
    out.push({ pid, startedAt: now - rng.int(10 * 60_000, 3 * 86_400_000) });
  }
  return out;
}

export interface LoadStatus {
  running: boolean;
  settings: LoadSettings;
  started_at: number | null;
  generated: number;
  queues: string[];
  capacity_per_s: number;
}

export class DemoLoad implements Service {
  readonly name = 'demo-load';
  private settings: LoadSettings = { ...DEFAULT_LOAD };
  private running = false;
  private startedAt: number | null = null;
  private cancelTick: Cancel | undefined;
  private queues: JobQueue[] = [];
  private classes: string[] = [];
  private cumulative: number[] = [];
  private pools: WorkerPool[] = [];
  private rng = seededRandom(DEFAULT_LOAD.seed);
  private carry = 0;
  private nextBurst = 0;
  private generated = 0;

  constructor(
    private readonly jobs: DemoHost,
    /** Start at boot (--demo). */
    private readonly startAtBoot = false,
  ) {}

  start(): void {
    if (this.startAtBoot) this.apply({});
  }

  status(): LoadStatus {
    const s = this.settings;
    return {
      running: this.running,
      settings: { ...s },
      started_at: this.startedAt,
      generated: this.generated,
      queues: this.queues.map((q) => q.name),
      capacity_per_s: this.running ? Math.round((s.processes * s.concurrency * 1000) / Math.max(1, s.duration_ms)) : 0,
    };
  }

  /** Starts with these settings, or changes a running load (re-creating processes and queues only when their shape changed). */
  apply(patch: Partial<LoadSettings>): LoadStatus {
    const next = { ...this.settings, ...patch };
    const reshape =
      !this.running || next.processes !== this.settings.processes || next.concurrency !== this.settings.concurrency || next.queues !== this.settings.queues;
    if (reshape && this.running) this.teardown();
    if (next.seed !== this.settings.seed || !this.running) this.rng = seededRandom(next.seed);
    this.settings = next;
    if (reshape) this.build();
    if (!this.running) {
      this.running = true;
      const now = this.jobs.clock.now();
      this.startedAt = now;
      this.nextBurst = now + Math.min(2000, next.burst_every_s * 1000);
      this.cancelTick = this.jobs.clock.every(TICK_MS, () => this.tick());
    }
    return this.status();
  }

  /** Service stop: the server is closing. */
  stop(): void {
    this.stopLoad();
  }

  /** Stops arrivals and removes the simulated processes and demo queues; real ones stay. */
  stopLoad(): LoadStatus {
    if (this.running) {
      this.cancelTick?.();
      this.teardown();
      this.running = false;
      this.startedAt = null;
    }
    return this.status();
  }

  private build(): void {
    const s = this.settings;
    this.queues = [];
    for (let i = 0; this.queues.length < s.queues; i++) {
      const base = i < NAMES.length ? NAMES[i]! : `synthetic_${i - NAMES.length + 1}`;
      // A durable queue of the same name keeps its name; the demo takes another.
      const q = this.jobs.memoryQueue(base) ?? this.jobs.memoryQueue(`${base}_sim`);
      if (q) this.queues.push(q);
    }
    this.classes = this.queues.map((q) => className(q.name));
    // Zipf-like weights: a few hot queues and a long tail, as real installations have.
    let sum = 0;
    this.cumulative = this.queues.map((_q, i) => (sum += 1 / (i + 1)));
    const m = Math.min(s.processes, this.queues.length);
    const pasts = processPasts(s.seed, s.processes, this.jobs.clock.now());
    for (let p = 0; p < s.processes; p++) {
      let served: JobQueue[];
      if (this.queues.length <= PROCESS_QUEUES_CAP) served = this.queues;
      else {
        // Every queue gets at least one process; the three hottest are shared by all.
        served = this.queues.filter((_q, j) => j < 3 || j % m === p % m);
      }
      this.pools.push(
        this.jobs.addPool(
          { hostname: `simulated-${String(p + 1).padStart(2, '0')}`, ...pasts[p]!, tag: 'demo', labels: ['simulated'], concurrency: Math.max(1, s.concurrency) },
          served,
        ),
      );
    }
  }

  private teardown(): void {
    for (const p of this.pools) this.jobs.removePool(p);
    for (const q of this.queues) this.jobs.removeMemoryQueue(q.name);
    this.pools = [];
    this.queues = [];
  }

  private pick(): number {
    const total = this.cumulative[this.cumulative.length - 1]!;
    const x = this.rng() * total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private push(i: number): void {
    const s = this.settings;
    const duration = Math.min(s.duration_ms * 20, Math.round(-Math.log(1 - this.rng()) * s.duration_ms));
    const fail = this.rng() < s.failure_rate;
    this.jobs.enqueueMemory(this.queues[i]!, SYNTHETIC, this.classes[i]!, { duration_ms: duration, fail });
    this.generated++;
  }

  private tick(): void {
    if (this.queues.length === 0) return;
    const s = this.settings;
    const now = this.jobs.clock.now();
    const t = (now - (this.startedAt ?? now)) / 1000;
    const rate = Math.max(0, s.rate * (1 + s.wave * Math.sin((2 * Math.PI * t) / Math.max(1, s.period_s))));
    const expected = (rate * TICK_MS) / 1000 + this.carry;
    const n = Math.floor(expected + this.rng());
    this.carry = expected - n;
    for (let k = 0; k < n; k++) this.push(this.pick());
    if (s.burst_every_s > 0 && s.burst_size > 0 && now >= this.nextBurst) {
      this.nextBurst = now + s.burst_every_s * 1000;
      const q = this.pick();
      for (let k = 0; k < s.burst_size; k++) this.push(q);
    }
  }
}
