// The monitor the app API's routes are handed: monitor.ts on SQLite (answers at once) or
// shared-ownership.ts in database mode (answers with promises). Routes await what either answers, as
// handlers do the domain's (domain/maybe-promise.ts): the SQLite monitor keeps its synchronous code.
import type { Monitor } from './monitor.ts';
import type { SharedMonitor } from './shared-ownership.ts';

export type MonitorApi = Monitor | SharedMonitor;
