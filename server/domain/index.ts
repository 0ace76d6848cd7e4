// The domain layer: the rules of builds, runners, projects and users, once, over a backend's ports
// and strategies (backend.ts). HTTP handlers and jobs call it and translate its results; they do
// not open transactions, emit domain events or reach the store themselves. An answer may be a
// promise (maybe-promise.ts: PostgreSQL's), so callers await it; on SQLite every answer is a value.
import type { AppEvents } from '../events.ts';
import { BuildRules, type BuildsDomain } from './builds.ts';
import { RunnerRules, type RunnersDomain } from './runners.ts';
import { ProjectRules, type ProjectsDomain } from './projects.ts';
import { UserRules, type UsersDomain } from './users.ts';
import type { DomainBackend } from './backend.ts';

export type { MaybePromise } from './maybe-promise.ts';
export type { DomainBackend } from './backend.ts';
export type { BuildsDomain, RunnersDomain, ProjectsDomain, UsersDomain };

export interface Domain {
  builds: BuildsDomain;
  runners: RunnersDomain;
  projects: ProjectsDomain;
  users: UsersDomain;
}

export function createDomain(backend: DomainBackend, events: AppEvents): Domain {
  // Each needs the other: a poll reads runners, a runner's deletion fails its running builds.
  const runners: RunnerRules = new RunnerRules(backend, (id) => builds.failRunningOf(id));
  const builds: BuildRules = new BuildRules(backend, events, runners);
  return {
    builds,
    runners,
    projects: new ProjectRules(backend.ports),
    users: new UserRules(backend.ports),
  };
}
