// Users of the control API: admins and others, each with a private token.
import type { User } from '../store/ports/user.ts';
import { UsernameTakenError } from '../store/ports/port-errors.ts';
import { andThen, rescue, type Loose, type MaybePromise } from './maybe-promise.ts';
import type { DomainPorts } from './backend.ts';

export type UsersDomain = Loose<UserRules>;

export class UserRules {
  constructor(private readonly p: DomainPorts) {}

  /** The new user, or undefined when the username is taken (also by another instance between the check and the insert). */
  create(username: string, admin: boolean): MaybePromise<User | undefined> {
    return andThen(this.p.users.byUsername(username), (taken) =>
      taken
        ? undefined
        : rescue<User | undefined>(
            () => this.p.users.create(username, admin),
            (err) => {
              if (err instanceof UsernameTakenError) return undefined;
              throw err;
            },
          ),
    );
  }

  list(): MaybePromise<User[]> {
    return this.p.users.list();
  }
}
