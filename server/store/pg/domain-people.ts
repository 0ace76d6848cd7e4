// Runners, projects and users of server/domain/ on PostgreSQL: the same rules, over the PostgreSQL
// adapters (no caches: another instance may change a row at any moment).
import type { Pool } from 'pg';
import type { NewRunner, Runner, RunnerInfo } from '../ports/runner.ts';
import type { Project } from '../ports/project.ts';
import type { User } from '../ports/user.ts';
import type { RegisterResult, RunnersDomain } from '../../domain/runners.ts';
import type { ProjectsDomain } from '../../domain/projects.ts';
import type { UsersDomain } from '../../domain/users.ts';
import { safeEqual } from '../../auth/tokens.ts';
import { PgRunners } from './runners.ts';
import type { RunnerCache } from './runner-cache.ts';
import { PgProjects } from './projects.ts';
import { PgUsers, UsernameTakenError } from './users.ts';

export class PgRunnersDomain implements RunnersDomain {
  private readonly runners: PgRunners;
  private readonly projects: PgProjects;

  constructor(
    pool: Pool,
    /** The instance's registration token, from the shared settings table: the same on every instance. */
    private readonly registrationToken: string,
    /** Shared with the builds domain, whose poll checks what it hands out (runner-cache.ts). */
    private readonly cache: RunnerCache,
  ) {
    this.runners = new PgRunners(pool);
    this.projects = new PgProjects(pool);
  }

  async byToken(token: string): Promise<Runner | undefined> {
    const runner = await this.runners.byToken(token);
    this.cache.remember(token, runner);
    return runner;
  }

  byTokenForPoll(token: string): Runner | Promise<Runner | undefined> {
    return this.cache.get(token) ?? this.byToken(token);
  }

  byId(id: number): Promise<Runner | undefined> {
    return this.runners.byId(id);
  }

  list(): Promise<Runner[]> {
    return this.runners.list();
  }

  buildCounts(): Promise<Map<number, number>> {
    return this.runners.buildCounts();
  }

  buildCount(id: number): Promise<number> {
    return this.runners.buildCount(id);
  }

  async register(token: string, fields: Omit<NewRunner, 'is_shared' | 'project_id' | 'active'>): Promise<RegisterResult> {
    let projectId: number | null = null;
    let shared = false;
    if (safeEqual(token, this.registrationToken)) shared = true;
    else {
      const project = await this.projects.byRunnersToken(token);
      if (!project) return { ok: false, reason: 'forbidden' };
      projectId = project.id;
    }
    if (!fields.run_untagged && fields.tag_list.length === 0) return { ok: false, reason: 'invalid' };
    return { ok: true, runner: await this.runners.create({ ...fields, is_shared: shared, project_id: projectId }) };
  }

  touch(runner: Runner, info?: RunnerInfo): Promise<void> {
    return this.runners.touch(runner, info);
  }

  async setActive(id: number, active: boolean): Promise<Runner | undefined> {
    if (!(await this.runners.setActive(id, active))) return undefined;
    return this.runners.byId(id);
  }

  delete(id: number): Promise<boolean> {
    return this.runners.delete(id);
  }

  markOffline(before: number): Promise<number> {
    return this.runners.markOffline(before);
  }
}

export class PgProjectsDomain implements ProjectsDomain {
  private readonly projects: PgProjects;

  constructor(pool: Pool) {
    this.projects = new PgProjects(pool);
  }

  create(input: { name: string; shared_runners_enabled?: boolean; build_timeout?: number }): Promise<Project> {
    return this.projects.create(input);
  }

  byId(id: number): Promise<Project | undefined> {
    return this.projects.byId(id);
  }

  list(): Promise<Project[]> {
    return this.projects.list();
  }
}

export class PgUsersDomain implements UsersDomain {
  private readonly users: PgUsers;

  constructor(pool: Pool) {
    this.users = new PgUsers(pool);
  }

  /** undefined when the username is taken, also when another instance took it between the check and the insert. */
  async create(username: string, admin: boolean): Promise<User | undefined> {
    if (await this.users.byUsername(username)) return undefined;
    try {
      return await this.users.create(username, admin);
    } catch (err) {
      if (err instanceof UsernameTakenError) return undefined;
      throw err;
    }
  }

  list(): Promise<User[]> {
    return this.users.list();
  }

  /** Whose PRIVATE-TOKEN this is (auth/admin.ts, through Store.tokenUsers). */
  byToken(token: string): Promise<User | undefined> {
    return this.users.byToken(token);
  }
}
