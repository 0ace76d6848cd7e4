// Users on PostgreSQL: UsersPort of store/ports.ts, asynchronous, with the semantics of
// store/users.ts (tokens stored with their SHA-256 digest, looked up by the digest).
import { UsernameTakenError } from '../ports/port-errors.ts';
import { digest, newToken } from '../../auth/tokens.ts';
import type { User } from '../ports/user.ts';
import { storedInt, storedTimeOr0 } from '../rows/row-values.ts';
import type { Queryable } from './connect.ts';
import type { UsersPortAsync } from '../ports/async-ports.ts';

interface PgUserRow {
  id: number;
  username: string;
  admin: boolean;
  private_token: string;
  created_at: number;
}

const COLUMNS = 'id, username, admin, private_token, created_at';

const toUser = (r: PgUserRow): User => ({
  id: storedInt(r.id) ?? 0,
  username: r.username,
  admin: r.admin === true,
  private_token: r.private_token,
  created_at: storedTimeOr0(r.created_at),
});

export { UsernameTakenError };

export class PgUsers implements UsersPortAsync {
  constructor(private readonly db: Queryable) {}

  async create(username: string, admin: boolean): Promise<User> {
    const token = newToken();
    const now = Date.now();
    // A plain INSERT that fails on the unique username has already drawn an id from the identity, and
    // the next user would skip one; SQLite gives the next user the id that failed. Inserting from a
    // SELECT that yields no row for a taken name draws nothing. (Two instances inserting one new name
    // at the same moment still meet the unique index, and one of them loses an id.)
    const { rows } = await this.db.query<PgUserRow>(
      `INSERT INTO users (username, admin, private_token, token_sha, created_at)
       SELECT $1, $2, $3, $4, $5 WHERE NOT EXISTS (SELECT 1 FROM users WHERE username = $1)
       RETURNING ${COLUMNS}`,
      [username, admin, token, digest(token), now],
    );
    if (!rows.length) throw new UsernameTakenError(username);
    return toUser(rows[0]);
  }

  async byUsername(username: string): Promise<User | undefined> {
    const { rows } = await this.db.query<PgUserRow>(`SELECT ${COLUMNS} FROM users WHERE username = $1`, [username]);
    return rows[0] && toUser(rows[0]);
  }

  async byToken(token: string): Promise<User | undefined> {
    const { rows } = await this.db.query<PgUserRow>(`SELECT ${COLUMNS} FROM users WHERE token_sha = $1`, [digest(token)]);
    return rows[0] && toUser(rows[0]);
  }

  async list(): Promise<User[]> {
    const { rows } = await this.db.query<PgUserRow>(`SELECT ${COLUMNS} FROM users ORDER BY id`);
    return rows.map(toUser);
  }
}
