// Projects on PostgreSQL: ProjectsPort of store/ports/ports.ts, asynchronous, with the semantics of
// store/sqlite/projects.ts (both tokens stored with their SHA-256 digests, looked up by the digest).
import { digest, newToken } from '../../auth/tokens.ts';
import type { Project } from '../ports/project.ts';
import { storedInt, storedTimeOr0 } from '../rows/row-values.ts';
import type { Queryable } from './connect.ts';
import type { ProjectsPortAsync } from '../ports/async-ports.ts';

/** pg returns a projects row with a Project's types (booleans, bigint read as numbers): still clamped, as a row edited by hand may be out of range. */
type PgProjectRow = Project;

const COLUMNS = 'id, name, runners_token, ci_token, shared_runners_enabled, build_timeout, created_at';
const MAX_TIMEOUT = 2 ** 31 - 1;

const toProject = (r: PgProjectRow): Project => ({
  id: storedInt(r.id) ?? 0,
  name: r.name,
  runners_token: r.runners_token,
  ci_token: r.ci_token,
  shared_runners_enabled: r.shared_runners_enabled === true,
  build_timeout: storedInt(r.build_timeout, 1, MAX_TIMEOUT) ?? 3600,
  created_at: storedTimeOr0(r.created_at),
});

export class PgProjects implements ProjectsPortAsync {
  constructor(private readonly db: Queryable) {}

  async create(input: { name: string; shared_runners_enabled?: boolean; build_timeout?: number }): Promise<Project> {
    const runners = newToken();
    const ci = newToken();
    // SQLite keeps any number and reads it clamped; PostgreSQL's integer column refuses a fraction or
    // one past 2^31 outright. Stored clamped as SQLite would read it, so create() answers the same.
    const timeout = storedInt(input.build_timeout ?? 3600, 1, MAX_TIMEOUT) ?? 3600;
    const { rows } = await this.db.query<PgProjectRow>(
      `INSERT INTO projects (name, runners_token, runners_token_sha, ci_token, ci_token_sha, shared_runners_enabled, build_timeout, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [input.name, runners, digest(runners), ci, digest(ci), input.shared_runners_enabled !== false, timeout, Date.now()],
    );
    return toProject(rows[0]);
  }

  async byId(id: number): Promise<Project | undefined> {
    if (!Number.isSafeInteger(id)) return undefined;
    const { rows } = await this.db.query<PgProjectRow>(`SELECT ${COLUMNS} FROM projects WHERE id = $1`, [id]);
    return rows[0] && toProject(rows[0]);
  }

  async byRunnersToken(token: string): Promise<Project | undefined> {
    const { rows } = await this.db.query<PgProjectRow>(`SELECT ${COLUMNS} FROM projects WHERE runners_token_sha = $1`, [digest(token)]);
    return rows[0] && toProject(rows[0]);
  }

  async byCiToken(token: string): Promise<Project | undefined> {
    const { rows } = await this.db.query<PgProjectRow>(`SELECT ${COLUMNS} FROM projects WHERE ci_token_sha = $1`, [digest(token)]);
    return rows[0] && toProject(rows[0]);
  }

  async list(): Promise<Project[]> {
    const { rows } = await this.db.query<PgProjectRow>(`SELECT ${COLUMNS} FROM projects ORDER BY id`);
    return rows.map(toProject);
  }
}
