// The monitor the app API's routes are handed, whichever way its store answers: at once on SQLite,
// with promises on PostgreSQL. Routes await what it answers, as handlers do the domain's
// (domain/maybe-promise.ts).
import type { Monitor } from './monitor.ts';
import type { Answers } from './ownership.ts';

export type MonitorApi = Monitor<Answers>;
