// Runners: registration (with the instance's registration token or a project's runners token),
// contact, pause and removal. The runner cache by token digest lives behind RunnersPort, which is
// the only writer of the runners table.
import type { NewRunner, Runner, RunnerInfo } from '../store/ports/runner.ts';
import { safeEqual } from '../auth/tokens.ts';
import { andThen, type Loose, type MaybePromise } from './maybe-promise.ts';
import type { DomainBackend, DomainPorts } from './backend.ts';

/** Only the keys GitLab copies from `info` into the runner row (helpers.rb `update_runner_info`). */
export function pickInfo(info: unknown): RunnerInfo | undefined {
  if (!info || typeof info !== 'object' || Array.isArray(info)) return undefined;
  const out: RunnerInfo = {};
  for (const key of ['name', 'version', 'revision', 'platform', 'architecture', 'executor'] as const) {
    const v = (info as Record<string, unknown>)[key];
    if (typeof v === 'string' && v.length <= 255) out[key] = v;
  }
  return out;
}

export type RegisterResult =
  | { ok: true; runner: Runner }
  /** The token is neither the registration token nor a project's runners token. */
  | { ok: false; reason: 'forbidden' }
  /** GitLab's validation: a runner that takes no untagged builds must have tags, else it is not saved. */
  | { ok: false; reason: 'invalid' };

export type RunnersDomain = Loose<RunnerRules>;

export class RunnerRules {
  private readonly p: DomainPorts;

  constructor(
    private readonly b: DomainBackend,
    /** What becomes of a deleted runner's running builds (BuildRules.failRunningOf). */
    private readonly orphaned: (runnerId: number) => MaybePromise<unknown>,
  ) {
    this.p = b.ports;
  }

  byToken(token: string): MaybePromise<Runner | undefined> {
    return andThen(this.p.runners.byToken(token), (runner) => {
      this.b.pollRunners.remember(token, runner);
      return runner;
    });
  }

  /** The runner a poll starts from: on PostgreSQL maybe the one read last (its poll checks it against the row). */
  byTokenForPoll(token: string): MaybePromise<Runner | undefined> {
    return this.b.pollRunners.get(token) ?? this.byToken(token);
  }

  byId(id: number): MaybePromise<Runner | undefined> {
    return this.p.runners.byId(id);
  }

  list(): MaybePromise<Runner[]> {
    return this.p.runners.list();
  }

  /** Builds handed to each runner so far, by runner id (absent: none). */
  buildCounts(): MaybePromise<Map<number, number>> {
    return this.p.runners.buildCounts();
  }

  buildCount(id: number): MaybePromise<number> {
    return this.p.runners.buildCount(id);
  }

  register(token: string, fields: Omit<NewRunner, 'is_shared' | 'project_id' | 'active'>): MaybePromise<RegisterResult> {
    const shared = safeEqual(token, this.b.registrationToken);
    return andThen(shared ? undefined : this.p.projects.byRunnersToken(token), (project): MaybePromise<RegisterResult> => {
      if (!shared && !project) return { ok: false, reason: 'forbidden' };
      if (!fields.run_untagged && fields.tag_list.length === 0) return { ok: false, reason: 'invalid' };
      return andThen(this.p.runners.create({ ...fields, is_shared: shared, project_id: project?.id ?? null }), (runner) => ({ ok: true, runner }));
    });
  }

  /** Records contact (and the runner's self-description, when sent). */
  touch(runner: Runner, info?: RunnerInfo): MaybePromise<void> {
    return this.p.runners.touch(runner, info);
  }

  /** Pauses or resumes; the runner as it is now, or undefined when there is none. */
  setActive(id: number, active: boolean): MaybePromise<Runner | undefined> {
    return andThen(this.p.runners.setActive(id, active), (found) => (found ? this.p.runners.byId(id) : undefined));
  }

  /** Removes the runner, then fails the builds it was running (they could never finish). */
  delete(id: number): MaybePromise<boolean> {
    return andThen(this.p.runners.delete(id), (deleted) => (deleted ? andThen(this.orphaned(id), () => true) : false));
  }

  /** Marks runners silent since `before` as offline; how many changed. */
  markOffline(before: number): MaybePromise<number> {
    return this.b.write((p) => p.runners.markOffline(before));
  }
}
