// Projects: each has its runners token (project runners register with it) and CI token.
import type { Store } from '../store/index.ts';
import type { Project } from '../store/ports/project.ts';
import type { Loose } from './maybe-promise.ts';

export type ProjectsDomain = Loose<SqliteProjectsDomain>;

export class SqliteProjectsDomain {
  constructor(private readonly store: Store) {}

  create(input: { name: string; shared_runners_enabled?: boolean; build_timeout?: number }): Project {
    return this.store.projects.create(input);
  }

  byId(id: number): Project | undefined {
    return this.store.projects.byId(id);
  }

  list(): Project[] {
    return this.store.projects.list();
  }
}
