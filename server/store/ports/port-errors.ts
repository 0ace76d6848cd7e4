// Errors a port may throw whatever the adapter, so the domain can answer them without knowing which one it runs on.

/** What UsersPort.create of a taken username throws (as SQLite's UNIQUE failure): a store with several writers meets it between the domain's check and the insert. */
export class UsernameTakenError extends Error {
  constructor(username: string) {
    super(`UNIQUE constraint failed: users.username (${JSON.stringify(username)} is taken)`);
    this.name = 'UsernameTakenError';
  }
}
