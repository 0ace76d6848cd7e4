// Runners: registration (with the instance's registration token or a project's runners token),
// contact, pause and removal. The runner cache by token digest lives behind RunnersPort, which is
// the only writer of the runners table.
import type { Store } from '../store/index.ts';
import type { NewRunner, Runner, RunnerInfo } from '../store/ports/runner.ts';
import { safeEqual } from '../auth/tokens.ts';
import type { Loose } from './maybe-promise.ts';

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

export type RunnersDomain = Loose<SqliteRunnersDomain>;

export class SqliteRunnersDomain {
  constructor(private readonly store: Store) {}

  byToken(token: string): Runner | undefined {
    return this.store.runners.byToken(token);
  }

  /**
   * The runner a poll starts from. PostgreSQL may answer from the runner it read last (its poll
   * checks it against the row, see store/pg/runner-cache.ts); here the store's own cache is current.
   */
  byTokenForPoll(token: string): Runner | undefined {
    return this.store.runners.byToken(token);
  }

  byId(id: number): Runner | undefined {
    return this.store.runners.byId(id);
  }

  list(): Runner[] {
    return this.store.runners.list();
  }

  /** Builds handed to each runner so far, by runner id (absent: none). */
  buildCounts(): Map<number, number> {
    return this.store.runners.buildCounts();
  }

  buildCount(id: number): number {
    return this.store.runners.buildCount(id);
  }

  register(token: string, fields: Omit<NewRunner, 'is_shared' | 'project_id' | 'active'>): RegisterResult {
    let projectId: number | null = null;
    let shared = false;
    if (safeEqual(token, this.store.registrationToken)) shared = true;
    else {
      const project = this.store.projects.byRunnersToken(token);
      if (!project) return { ok: false, reason: 'forbidden' };
      projectId = project.id;
    }
    if (!fields.run_untagged && fields.tag_list.length === 0) return { ok: false, reason: 'invalid' };
    return { ok: true, runner: this.store.runners.create({ ...fields, is_shared: shared, project_id: projectId }) };
  }

  /** Records contact (and the runner's self-description, when sent). */
  touch(runner: Runner, info?: RunnerInfo): void {
    this.store.runners.touch(runner, info);
  }

  /** Pauses or resumes; the runner as it is now, or undefined when there is none. */
  setActive(id: number, active: boolean): Runner | undefined {
    if (!this.store.runners.setActive(id, active)) return undefined;
    return this.store.runners.byId(id);
  }

  delete(id: number): boolean {
    return this.store.runners.delete(id);
  }

  /** Marks runners silent since `before` as offline; how many changed. */
  markOffline(before: number): number {
    return this.store.tx(() => this.store.runners.markOffline(before));
  }
}
