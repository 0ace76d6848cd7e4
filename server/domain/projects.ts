// Projects: each has its runners token (project runners register with it) and CI token.
import type { Project } from '../store/ports/project.ts';
import type { Loose, MaybePromise } from './maybe-promise.ts';
import type { DomainPorts } from './backend.ts';

export type ProjectsDomain = Loose<ProjectRules>;

export class ProjectRules {
  constructor(private readonly p: DomainPorts) {}

  create(input: { name: string; shared_runners_enabled?: boolean; build_timeout?: number }): MaybePromise<Project> {
    return this.p.projects.create(input);
  }

  byId(id: number): MaybePromise<Project | undefined> {
    return this.p.projects.byId(id);
  }

  list(): MaybePromise<Project[]> {
    return this.p.projects.list();
  }
}
