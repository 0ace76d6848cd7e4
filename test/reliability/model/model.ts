// The small model the real server is checked against after every step: what each build's status,
// trace bytes and artifact must be, which runners exist, what the job counters must at least say,
// which connections and saved settings there are. Sequential steps make it exact: a step's request
// has been answered before the next one starts, so everything acknowledged must be there.
import type { BuildStatus } from '../../../server/store/builds.ts';

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
}

export const DEFAULT_MAX_TRACE_MB = 64;
export const DEFAULT_MAX_ARTIFACT_MB = 100;

export class Model {
  projects: MProject[] = [];
  runners: MRunner[] = [];
  builds: MBuild[] = [];
  connections: MConnection[] = [];
  /** Ticks whenever the server's X-GitLab-Last-Update must change: a build created, a restart. */
  epoch = 0;
  /** settings.json as saved through the API, and what is in force since the last start. */
  saved: Record<string, string | number | boolean> = {};
  maxTraceBytes = DEFAULT_MAX_TRACE_MB * 1024 * 1024;
  maxArtifactBytes = DEFAULT_MAX_ARTIFACT_MB * 1024 * 1024;
  jobs = { acked: 0, failing: 0, dead: 0, queues: new Set<string>() };
  /** The server's job counters at the start of the run, and the highest seen since (they never go down). */
  counters = { processed0: 0, failed0: 0, processed: 0, failed: 0 };
  steps = 0;
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

  /** What a restart changes: the queue value's boot id, and saved settings come into force. */
  restarted(): void {
    this.epoch++;
    this.maxTraceBytes = Number(this.saved['max-trace-mb'] ?? DEFAULT_MAX_TRACE_MB) * 1024 * 1024;
    this.maxArtifactBytes = Number(this.saved['max-artifact-mb'] ?? DEFAULT_MAX_ARTIFACT_MB) * 1024 * 1024;
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
