// The domain layer: the rules of builds, runners, projects and users, over the storage ports.
// HTTP handlers and jobs call it and translate its results; they do not open transactions, emit
// domain events or reach the store themselves.
import type { AppEvents } from '../events.ts';
import type { Store } from '../store/index.ts';
import { BuildsDomain } from './builds.ts';
import { RunnersDomain } from './runners.ts';
import { ProjectsDomain } from './projects.ts';
import { UsersDomain } from './users.ts';

export interface Domain {
  builds: BuildsDomain;
  runners: RunnersDomain;
  projects: ProjectsDomain;
  users: UsersDomain;
}

export function createDomain(store: Store, events: AppEvents): Domain {
  return {
    builds: new BuildsDomain(store, events),
    runners: new RunnersDomain(store),
    projects: new ProjectsDomain(store),
    users: new UsersDomain(store),
  };
}
