// The domain layer: the rules of builds, runners, projects and users, over the storage ports.
// HTTP handlers and jobs call it and translate its results; they do not open transactions, emit
// domain events or reach the store themselves. Two implementations behind one type: the SQLite one
// here (synchronous underneath) and the PostgreSQL one (store/pg/domain*.ts); an answer may be a
// promise (maybe-promise.ts), so callers await it.
import type { AppEvents } from '../events.ts';
import type { Store } from '../store/index.ts';
import { SqliteBuildsDomain, type BuildsDomain } from './builds.ts';
import { SqliteRunnersDomain, type RunnersDomain } from './runners.ts';
import { SqliteProjectsDomain, type ProjectsDomain } from './projects.ts';
import { SqliteUsersDomain, type UsersDomain } from './users.ts';

export type { MaybePromise } from './maybe-promise.ts';
export type { BuildsDomain, RunnersDomain, ProjectsDomain, UsersDomain };

export interface Domain {
  builds: BuildsDomain;
  runners: RunnersDomain;
  projects: ProjectsDomain;
  users: UsersDomain;
}

export function createDomain(store: Store, events: AppEvents): Domain {
  return {
    builds: new SqliteBuildsDomain(store, events),
    runners: new SqliteRunnersDomain(store),
    projects: new SqliteProjectsDomain(store),
    users: new SqliteUsersDomain(store),
  };
}
