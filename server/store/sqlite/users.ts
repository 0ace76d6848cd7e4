import type { Db } from './db.ts';
import { digest, newToken } from '../../auth/tokens.ts';
import type { User } from '../ports/user.ts';

interface UserRow {
  id: number;
  username: string;
  admin: number;
  private_token: string;
  created_at: number;
}

const toUser = (r: UserRow): User => ({ ...r, admin: r.admin === 1 });

export class Users {
  constructor(private readonly db: Db) {}

  create(username: string, admin: boolean): User {
    const token = newToken();
    const now = Date.now();
    const { lastInsertRowid } = this.db.run(
      'INSERT INTO users (username, admin, private_token, token_sha, created_at) VALUES (?, ?, ?, ?, ?)',
      [username, admin ? 1 : 0, token, digest(token), now],
    );
    return { id: lastInsertRowid, username, admin, private_token: token, created_at: now };
  }

  byUsername(username: string): User | undefined {
    const r = this.db.get<UserRow>('SELECT * FROM users WHERE username = ?', [username]);
    return r && toUser(r);
  }

  byToken(token: string): User | undefined {
    const r = this.db.get<UserRow>('SELECT * FROM users WHERE token_sha = ?', [digest(token)]);
    return r && toUser(r);
  }

  list(): User[] {
    return this.db.all<UserRow>('SELECT * FROM users ORDER BY id').map(toUser);
  }
}
