// The asynchronous ports of the PostgreSQL store: the synchronous ports of store/ports/ports.ts with every
// method's result a promise, and the same arguments and meanings. Derived by a mapped type so a
// method added to a sync port appears here too, and an adapter that forgets it fails to compile.
import type { BuildsPort, ListingsPort, ProjectsPort, RunnersPort, SecretsPort, UsersPort } from './ports.ts';
import type { AlertsRepo, ConnectionsRepo, MonitorHistoryRepo } from './monitor-ports.ts';

import type { AsyncPort } from './async-port.ts';

export type { AsyncPort };

export type RunnersPortAsync = AsyncPort<RunnersPort>;
export type ProjectsPortAsync = AsyncPort<ProjectsPort>;
export type UsersPortAsync = AsyncPort<UsersPort>;
export type SecretsPortAsync = AsyncPort<SecretsPort>;
export type BuildsPortAsync = AsyncPort<BuildsPort>;

export type AlertsRepoAsync = AsyncPort<AlertsRepo>;
export type ConnectionsRepoAsync = AsyncPort<ConnectionsRepo>;
export type MonitorHistoryRepoAsync = AsyncPort<MonitorHistoryRepo>;
export type ListingsPortAsync = AsyncPort<ListingsPort>;
