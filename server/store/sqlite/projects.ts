import type { Db } from './db.ts';
import { digest, newToken } from '../../auth/tokens.ts';
import { storedInt, storedTimeOr0 } from '../rows/row-values.ts';
import type { Project } from '../ports/project.ts';

interface ProjectRow extends Omit<Project, 'shared_runners_enabled'> {
  shared_runners_enabled: number;
}

const toProject = (r: ProjectRow): Project => ({
  id: r.id,
  name: r.name,
  runners_token: r.runners_token,
  ci_token: r.ci_token,
  shared_runners_enabled: r.shared_runners_enabled === 1,
  // Read clamped (row-values.ts): a value an older version stored out of range must not break reads.
  build_timeout: storedInt(r.build_timeout, 1, 2 ** 31 - 1) ?? 3600,
  created_at: storedTimeOr0(r.created_at),
});

export class Projects {
  constructor(private readonly db: Db) {}

  create(input: { name: string; shared_runners_enabled?: boolean; build_timeout?: number }): Project {
    const runners = newToken();
    const ci = newToken();
    const now = Date.now();
    const { lastInsertRowid } = this.db.run(
      `INSERT INTO projects (name, runners_token, runners_token_sha, ci_token, ci_token_sha, shared_runners_enabled, build_timeout, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [input.name, runners, digest(runners), ci, digest(ci), input.shared_runners_enabled === false ? 0 : 1, input.build_timeout ?? 3600, now],
    );
    return this.byId(lastInsertRowid)!;
  }

  byId(id: number): Project | undefined {
    const r = this.db.get<ProjectRow>('SELECT * FROM projects WHERE id = ?', [id]);
    return r && toProject(r);
  }

  byRunnersToken(token: string): Project | undefined {
    const r = this.db.get<ProjectRow>('SELECT * FROM projects WHERE runners_token_sha = ?', [digest(token)]);
    return r && toProject(r);
  }

  byCiToken(token: string): Project | undefined {
    const r = this.db.get<ProjectRow>('SELECT * FROM projects WHERE ci_token_sha = ?', [digest(token)]);
    return r && toProject(r);
  }

  list(): Project[] {
    return this.db.all<ProjectRow>('SELECT * FROM projects ORDER BY id').map(toProject);
  }
}
