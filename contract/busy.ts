// What a connection is running now (Sidekiq Web's Busy page): one row per job a worker thread has
// in hand. A sidekiq connection's rows come from each process's `<identity>:workers` hash; the
// embedded connection's from its own worker slots. Capped: `total` says how many there were.
import { Type, type Static, type TSchema } from '@sinclair/typebox';

const Maybe = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const BusyQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000, default: 500, description: 'most rows answered (oldest start first)' })),
});
export type BusyQuery = Static<typeof BusyQuery>;

export const BusyJob = Type.Object({
  process: Type.String({ description: "the process's identity (Sidekiq: hostname:pid:nonce)" }),
  quiet: Type.Boolean({ description: 'the process takes no new work (TSTP, or stopping): this job is its last' }),
  stopping: Type.Boolean({ description: 'the process hash says "stopping"' }),
  thread: Type.String({ description: "the worker thread's id (Sidekiq's tid)" }),
  queue: Maybe(Type.String()),
  class: Type.String({ description: "the job's class (ActiveJob wrappers: the wrapped class); '?' when the entry is unreadable" }),
  args: Type.String({ description: 'the arguments as JSON, cut to 200 characters' }),
  args_truncated: Type.Boolean(),
  args_full: Maybe(Type.String({ description: 'when `args` was cut: the whole arguments, up to 64 KiB' })),
  jid: Maybe(Type.String()),
  run_at: Maybe(Type.String({ description: 'ISO time the job started (the hash\'s run_at)' })),
  running_for_s: Maybe(Type.Number({ minimum: 0, description: 'seconds since run_at, as of the read' })),
  unreadable: Type.Boolean({ description: 'the entry or its payload is not the JSON Sidekiq writes; shown with what parsed' }),
});
export type BusyJob = Static<typeof BusyJob>;

export const BusyPage = Type.Object({
  at: Type.String({ description: 'ISO time of the read' }),
  total: Type.Integer({ minimum: 0, description: 'running jobs found (more than `jobs` when past `limit`)' }),
  processes_read: Type.Integer({ minimum: 0 }),
  processes_total: Type.Integer({ minimum: 0, description: 'processes known; more than read when past --sidekiq-max-processes' }),
  jobs: Type.Array(BusyJob),
});
export type BusyPage = Static<typeof BusyPage>;
