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
  const runners = new RunnerRules(backend);
  return {
    builds: new BuildRules(backend, events, runners),
    runners,
    projects: new ProjectRules(backend.ports),
    users: new UserRules(backend.ports),
  };
}
