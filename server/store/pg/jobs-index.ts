// The job system on PostgreSQL: what a server on the PostgreSQL store runs its job system
// on when --redis is not given. Its own entry point so index.ts (the store and domain's, H5's) can
// re-export it when the PostgreSQL server is wired; nothing imports it yet.
export { PgJobBackend, type PgJobBackendOptions } from './jobs.ts';
