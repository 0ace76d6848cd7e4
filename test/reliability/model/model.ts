// The small model the real server is checked against after every step: what each build's status,
// trace bytes and artifact must be, which runners exist, what the job counters must at least say,
// which connections and saved settings there are. Sequential steps make it exact: a step's request
// has been answered before the next one starts, so everything acknowledged must be there.
import type { BuildStatus } from '../../../server/store/ports/build.ts';
import type { ActiveFault } from './outage.ts';

export interface MProject {
  id: number;
  runnersToken: string;
  shared: boolean;
}
export interface MRunner {
  id: number;
  token: string;
  shared: boolean;
  projectId: number | null;
  active: boolean;
  deleted: boolean;
  /** The X-GitLab-Last-Update it was last given, and the model's queue epoch at that moment. */
  lastUpdate?: { value: string; epoch: number };
}
export interface MArtifact {
  content: Buffer;
  filename: string;
  /** expire_at lies in [lo, hi] (the server reads its clock while the request is in flight); null = never. */
  expire: { lo: number; hi: number } | null;
  /** The zip's entries when it is one: the listing the background job may fill in. */
  listing: { name: string; size: number }[] | null;
}
export interface MBuild {
  id: number;
  projectId: number;
  /** Known once a runner has taken it (the 201 carries it). */
  token: string | null;
  status: BuildStatus;
  runnerId: number | null;
  trace: Buffer;
  artifact: MArtifact | null;
}
export interface MConnection {
  id: string;
  name: string;
  enabled: boolean;
  interval: number;
  hasToken: boolean;
  embedded: boolean;
  /** Remote ones: the base URL and the token it was last given (each token the model gives is unique). */
  url?: string;
  token?: string;
}
/** The synthetic jobs enqueued into one queue since it was (re)created: what its deletion may drop. */
export interface MQueue {
  total: number;
  failing: number;
  dead: number;
}

export const DEFAULT_MAX_TRACE_MB = 64;
export const DEFAULT_MAX_ARTIFACT_MB = 100;
/** The queues the model's synthetic jobs go to. */
export const QUEUES = ['model_a', 'model_b', 'model-c.d:e'];
export const DEFAULT_MAX_EXPIRE_DAYS = 36525;
export const DEFAULT_MAX_BATCH_MB = 16;
/** Settings the test server gets as flags (startServer / spawnServer): a saved value never applies, nor is it warned about. */
export const OVERRIDDEN = new Set(['port', 'log-level', 'data-dir', 'artifact-expiry-every-ms', 'stuck-builds-every-ms', 'runner-contact-every-ms', 'redis', 'redis-process-ttl-s', 'redis-beat-ms', 'redis-command-timeout-ms', 'job-backoff-unit-ms']);

export class Model {
  projects: MProject[] = [];
  runners: MRunner[] = [];
  builds: MBuild[] = [];
  connections: MConnection[] = [];
  /** Ticks whenever the server's X-GitLab-Last-Update must change: a build created, a restart. */
  epoch = 0;
  /** settings.json as saved through the API (valid values), and what is in force since the last start. */
  saved: Record<string, string | number | boolean> = {};
  /** Invalid values written into settings.json directly (as an older version could): shown with a problem, ignored at start. */
  savedBad: Record<string, unknown> = {};
  /** settings.json is not a JSON object (then nothing in it is saved). */
  fileBroken = false;
  inForce: Record<string, string | number | boolean> = {};
  /** What GET /api/app/settings must warn about since the last start: names of ignored values, and 'file' when unreadable. */
  warnings: string[] = [];
  maxExpireDays = DEFAULT_MAX_EXPIRE_DAYS;
  maxBatchBytes = DEFAULT_MAX_BATCH_MB * 1024 * 1024;
  /** Bytes of commands and options stored in builds by big batches: bounded per run to keep the lists cheap. */
  bigBytes = 0;
  /** The origin each token given to a connection was given for: it must never be sent anywhere else. */
  tokenOrigin = new Map<string, string>();
  tokensGiven = 0;
  maxTraceBytes = DEFAULT_MAX_TRACE_MB * 1024 * 1024;
  maxArtifactBytes = DEFAULT_MAX_ARTIFACT_MB * 1024 * 1024;
  /**
   * acked: jobs that must run (enqueued minus those a queue deletion dropped); failing: at least this
   * many must fail; the dead set holds between deadMin and deadMax (a dropped job may have died first).
   */
  jobs = { acked: 0, failing: 0, deadMin: 0, deadMax: 0, queues: new Map<string, MQueue>(), maybe: 0, maybeFailing: 0, loose: false };
  /**
   * The counters count the model's jobs alone (no periodic built-ins): processed and failed may then
   * not pass acked + maybe and failing + maybeFailing, where `maybe` counts jobs enqueued by steps of
   * unknown outcome (unless `jobs.loose`: known-unfixed.ts). A job run twice shows there.
   */
  exact = false;
  /** The fault in force, when one is (outage.ts). */
  fault: ActiveFault | undefined;
  faults = 0;
  /** Steps answered 503 during a fault, and steps of unknown outcome (with what happened). */
  notApplied = 0;
  unknown: string[] = [];
  /** The server's job counters at the start of the run, and the highest seen since (they never go down). */
  counters = { processed0: 0, failed0: 0, processed: 0, failed: 0 };
  steps = 0;
  /** No step starts once `steps` has reached it (the run's share of a step budget). */
  stepLimit = Infinity;
  restarts = 0;
  kills = 0;

  build(id: number): MBuild | undefined {
    return this.builds.find((b) => b.id === id);
  }
  project(id: number): MProject {
    return this.projects.find((p) => p.id === id)!;
  }
  runner(id: number | null): MRunner | undefined {
    return id === null ? undefined : this.runners.find((r) => r.id === id);
  }
  live(): MRunner[] {
    return this.runners.filter((r) => !r.deleted);
  }

  /**
   * What a restart changes: saved settings come into force, and the queue value's boot id where each
   * server keeps its own (on PostgreSQL the value is the database's: a restart leaves it).
   */
  restarted(sharedQueueValue = false): void {
    if (!sharedQueueValue) this.epoch++;
    this.inForce = { ...this.saved };
    this.maxTraceBytes = Number(this.saved['max-trace-mb'] ?? DEFAULT_MAX_TRACE_MB) * 1024 * 1024;
    this.maxArtifactBytes = Number(this.saved['max-artifact-mb'] ?? DEFAULT_MAX_ARTIFACT_MB) * 1024 * 1024;
    this.maxExpireDays = Number(this.saved['max-artifact-expire-days'] ?? DEFAULT_MAX_EXPIRE_DAYS);
    this.maxBatchBytes = Number(this.saved['max-build-batch-mb'] ?? DEFAULT_MAX_BATCH_MB) * 1024 * 1024;
    this.warnings = [...(this.fileBroken ? ['file'] : []), ...Object.keys(this.savedBad).filter((n) => !OVERRIDDEN.has(n) && !n.startsWith('unknown'))];
  }

  /** A new token for a connection at `url`, remembered with its origin. */
  giveToken(url: string): string {
    const token = `model-remote-token-${++this.tokensGiven}`;
    this.tokenOrigin.set(token, new URL(url).origin);
    return token;
  }

  /**
   * The build `builds/register` must hand this runner (GitLab's RegisterBuildService): a project
   * runner takes its project's oldest pending build; a shared runner looks at projects with shared
   * runners enabled, fewest builds running on shared runners first, then the oldest pending build.
   */
  nextFor(runner: MRunner): MBuild | undefined {
    const pending = this.builds.filter((b) => b.status === 'pending');
    if (!runner.shared) return pending.filter((b) => b.projectId === runner.projectId).sort((a, b) => a.id - b.id)[0];
    const candidates = this.projects
      .filter((p) => p.shared)
      .map((p) => ({ p, oldest: pending.filter((b) => b.projectId === p.id).sort((a, b) => a.id - b.id)[0] }))
      .filter((c) => c.oldest !== undefined);
    const runningShared = (projectId: number) =>
      this.builds.filter((b) => b.projectId === projectId && b.status === 'running' && this.runner(b.runnerId)?.shared === true && !this.runner(b.runnerId)!.deleted).length;
    candidates.sort((a, b) => runningShared(a.p.id) - runningShared(b.p.id) || a.oldest!.id - b.oldest!.id);
    return candidates[0]?.oldest;
  }

  /** Whether the artifact must still be there at `now` (false: it may have been swept). */
  static mustHave(a: MArtifact, now: number): boolean {
    return a.expire === null || now < a.expire.lo;
  }
}
