// Users of the control API: admins and others, each with a private token.
import type { Store } from '../store/index.ts';
import type { User } from '../store/ports/user.ts';
import type { Loose } from './maybe-promise.ts';

export type UsersDomain = Loose<SqliteUsersDomain>;

export class SqliteUsersDomain {
  constructor(private readonly store: Store) {}

  /** The new user, or undefined when the username is taken. */
  create(username: string, admin: boolean): User | undefined {
    if (this.store.users.byUsername(username)) return undefined;
    return this.store.users.create(username, admin);
  }

  list(): User[] {
    return this.store.users.list();
  }
}
