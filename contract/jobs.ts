// The control API's job endpoints (/api/v3/sim/jobs…, /api/v3/sim/load): enqueue synthetic jobs,
// read the queues and the retry and dead sets, and drive the demo load generator.
import { Type, type Static } from '@sinclair/typebox';

export const QueueName = Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,100}$', description: 'letters, digits, _ . : - (1–100)' });

export const NewJobs = Type.Object(
  {
    queue: QueueName,
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, default: 1 })),
    class: Type.Optional(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_:]{0,99}$', description: 'class name shown for the jobs (default SyntheticJob)' })),
    duration_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_600_000, description: 'how long each job works' })),
    fail: Type.Optional(Type.Boolean({ description: 'every run of these jobs fails (they retry, then go to the dead set)' })),
    // Written without a `type` on the `false` branch: the validator coerces types, and would turn 0 into false.
    retry: Type.Optional(
      Type.Unsafe<number | false>({
        anyOf: [{ const: false }, { type: 'integer', minimum: 0, maximum: 25 }],
        description: 'retries before the dead set (default 25, as Sidekiq); false = drop on failure',
      }),
    ),
  },
  { additionalProperties: false },
);
export type NewJobs = Static<typeof NewJobs>;

export const EnqueuedJobs = Type.Object({
  queue: Type.String(),
  enqueued: Type.Integer(),
  backlog: Type.Optional(
    Type.Integer({ description: 'the queue’s backlog right after enqueueing (workers may already have taken some); absent when the backend could not be read after the push' }),
  ),
});
export type EnqueuedJobs = Static<typeof EnqueuedJobs>;

export const QueueParams = Type.Object({ name: QueueName });

export const DeletedQueue = Type.Object({
  name: Type.String(),
  dropped: Type.Integer({ description: 'waiting, running and retrying jobs dropped (dead jobs stay in the dead set)' }),
});
export type DeletedQueue = Static<typeof DeletedQueue>;

export const QueueOrigin = Type.Union([Type.Literal('jobscope'), Type.Literal('sidekiq_app')], {
  description:
    'who made the queue. jobscope: one of Jobscope’s own (a built-in job kind’s queue from its kind registry, a queue it created for synthetic jobs, the demo load’s); sidekiq_app: with --redis, a queue a Sidekiq app pushed to in the shared Redis that no Jobscope server created. The embedded SQLite job system has only jobscope queues',
});
export type QueueOrigin = Static<typeof QueueOrigin>;

export const QueueView = Type.Object({
  name: Type.String(),
  origin: QueueOrigin,
  durable: Type.Boolean({ description: 'false for the demo load’s memory-backed queues' }),
  backlog: Type.Integer(),
  latency: Type.Integer(),
  oldest_enqueued_at: Type.Union([Type.String(), Type.Null()]),
  processes: Type.Integer({ description: 'worker processes serving it' }),
  builtin: Type.Boolean({ description: 'a queue of Jobscope’s own jobs: never deleted' }),
  deletable: Type.Boolean({
    description: 'DELETE /api/v3/sim/jobs/queues/:name accepts it now: not built-in, not the demo’s, and a sidekiq_app queue only while empty',
  }),
  delete_refusal: Type.Union([Type.String(), Type.Null()], { description: 'why it is not deletable, word for word the reason DELETE’s 409 gives (its message is "409 Conflict - " and this); null when deletable' }),
});
export type QueueView = Static<typeof QueueView>;

/** Args too deep to answer as JSON (over 64 levels of nesting), as their text; null otherwise (then `args` holds them). */
export const ArgsRaw = Type.Union([Type.String(), Type.Null()], {
  description: 'the args as stored, as text, when they nest deeper than 64 levels (then `args` is {}); null otherwise',
});

/** A job waiting in a queue, as Sidekiq Web's queue page lists it. */
export const QueuedJobView = Type.Object({
  id: Type.Integer({ description: 'the job’s id (Sidekiq’s jid)' }),
  queue: Type.String(),
  class: Type.String(),
  args: Type.Record(Type.String(), Type.Unknown()),
  retry: Type.Union([Type.Integer(), Type.Boolean()]),
  retry_count: Type.Union([Type.Integer(), Type.Null()], { description: 'as Sidekiq counts: null until its first failure, then failures - 1 (a job back from the retry set)' }),
  created_at: Type.String(),
  enqueued_at: Type.String(),
  args_raw: ArgsRaw,
});
export type QueuedJobView = Static<typeof QueuedJobView>;

/** GitLab's pagination: `page` from 1, `per_page` rows; the answer carries X-Total, X-Total-Pages, X-Page, X-Per-Page, X-Next-Page, X-Prev-Page. */
export const PageQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'rows per page (default 25; `limit` is the same, kept for older callers)' })),
  private_token: Type.Optional(Type.String()),
});
export type PageQuery = Static<typeof PageQuery>;

/**
 * An entry of the retry or the dead set: its `key`, `<score>-<jid>` as Sidekiq Web names it
 * (SortedEntry#key; a key copied from Sidekiq Web's URL works), or an old numeric id (the job's
 * `id`: exact on SQLite, refused on Redis when two entries share it).
 */
export const EntryKey = Type.Union(
  [
    Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    Type.String({ pattern: '^[^-]+-', maxLength: 1000, description: '`<score>-<jid>`: the entry’s `key`' }),
  ],
  { description: 'the entry’s `key` ("<score>-<jid>"), or its numeric `id`' },
);

/** Entries of the retry or the dead set, by key (a selection). */
export const JobIds = Type.Object({ ids: Type.Array(EntryKey, { minItems: 1, maxItems: 10000 }) }, { additionalProperties: false });
export type JobIds = Static<typeof JobIds>;

/** `ids` given: only those; absent: every job of the set. */
export const SomeJobIds = Type.Partial(JobIds, { additionalProperties: false });
export type SomeJobIds = Static<typeof SomeJobIds>;

export const ActedOn = Type.Object({
  count: Type.Integer({ description: 'jobs retried or deleted' }),
  missing: Type.Array(Type.Union([Type.Integer(), Type.String()]), { description: 'keys given that named no entry of the set (already retried, run or deleted), as given' }),
});
export type ActedOn = Static<typeof ActedOn>;

export const FailedJobView = Type.Object({
  key: Type.String({
    description:
      'what names this entry in the retry and dead routes: `<score>-<jid>` as Sidekiq Web names it (score: the set’s, epoch seconds; on SQLite when it runs again or died, with the job’s id for jid). Two entries of one jid at different scores are distinct',
  }),
  id: Type.Integer({ description: 'the job’s number (SQLite: its row; Redis: the first 48 bits of its jid, which two jobs may share: use `key`)' }),
  queue: Type.String(),
  class: Type.String(),
  args: Type.Record(Type.String(), Type.Unknown()),
  retry: Type.Union([Type.Integer(), Type.Boolean()]),
  retry_count: Type.Integer({ description: 'as Sidekiq 6.4 counts: failures - 1 (0 after the first failure), in the retry set and the dead set alike' }),
  error: Type.Union([Type.String(), Type.Null()]),
  error_class: Type.Union([Type.String(), Type.Null()], { description: 'the error’s class, from `error` (Sidekiq’s error_class)' }),
  error_message: Type.Union([Type.String(), Type.Null()], { description: 'the error’s message, from `error` (Sidekiq’s error_message)' }),
  created_at: Type.String(),
  enqueued_at: Type.String(),
  failed_at: Type.Union([Type.String(), Type.Null()]),
  first_failed_at: Type.Union([Type.String(), Type.Null()], { description: 'the first failure (Sidekiq’s failed_at) where the backend keeps it apart from the last (Redis); else null' }),
  run_at: Type.Union([Type.String(), Type.Null()], { description: 'retry set: when it goes back into its queue' }),
  args_raw: ArgsRaw,
  unreadable: Type.Boolean({ description: 'the entry is no job (not JSON, or no class): `args_raw` holds its text; it can be deleted, not retried' }),
});
export type FailedJobView = Static<typeof FailedJobView>;

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  page: PageQuery.properties.page,
  per_page: PageQuery.properties.per_page,
  private_token: Type.Optional(Type.String()),
});
export type ListQuery = Static<typeof ListQuery>;

export const RetryDead = Type.Object({ ids: Type.Optional(Type.Array(EntryKey, { maxItems: 10000 })) }, { additionalProperties: false });
export type RetryDead = Static<typeof RetryDead>;

export const Count = Type.Object({ count: Type.Integer() });

// Bounded so that one request cannot make the demo eat the machine (the bench uses 500 × 5 over 1,000 queues).
export const LoadSettings = Type.Object(
  {
    processes: Type.Integer({ minimum: 1, maximum: 1000, description: 'simulated worker processes' }),
    concurrency: Type.Integer({ minimum: 1, maximum: 50, description: 'worker slots per simulated process' }),
    queues: Type.Integer({ minimum: 1, maximum: 2000, description: 'synthetic queues (a few hot ones, a long tail)' }),
    rate: Type.Number({ minimum: 0, maximum: 5000, description: 'mean arrivals per second over all demo queues' }),
    wave: Type.Number({ minimum: 0, maximum: 1, description: 'amplitude of the slow swell of the rate (0 = flat)' }),
    period_s: Type.Integer({ minimum: 1, maximum: 86400, description: 'period of the swell, seconds' }),
    duration_ms: Type.Integer({ minimum: 0, maximum: 600000, description: 'mean job duration' }),
    failure_rate: Type.Number({ minimum: 0, maximum: 1, description: 'share of jobs that fail' }),
    burst_every_s: Type.Integer({ minimum: 0, maximum: 86400, description: 'a burst lands in one queue this often; 0 = none' }),
    burst_size: Type.Integer({ minimum: 0, maximum: 10000 }),
    seed: Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 }),
  },
  { additionalProperties: false },
);
export type LoadSettings = Static<typeof LoadSettings>;

export const LoadPatch = Type.Partial(LoadSettings, { additionalProperties: false });
export type LoadPatch = Static<typeof LoadPatch>;

export const LoadStatus = Type.Object({
  running: Type.Boolean(),
  settings: LoadSettings,
  started_at: Type.Union([Type.String(), Type.Null()]),
  generated: Type.Integer({ description: 'jobs generated since it started' }),
  queues: Type.Array(Type.String()),
  capacity_per_s: Type.Integer({ description: 'jobs/s the simulated processes can finish at the mean duration' }),
});
export type LoadStatus = Static<typeof LoadStatus>;
