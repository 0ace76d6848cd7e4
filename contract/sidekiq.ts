// A `sidekiq` connection: any Sidekiq watched read-only through its Redis.
// What the app API takes to add one, what its `current` adds to compound_metrics (what GitLab's
// endpoint hides), and the paged peeks into a queue and the retry and dead sets.
import { Type, type Static } from '@sinclair/typebox';
import { NO_NUL } from './text.ts';

export const SidekiqNamespace = Type.String({
  pattern: '^([A-Za-z0-9_.:-]{1,64})?$',
  description: "redis-namespace's prefix: every key is read as `<namespace>:<key>`; '' or left out for none (a PATCH with '' removes one)",
});

/** The fields of a sidekiq connection; the password goes in, never out. */
export const SidekiqFields = Type.Object({
  redis_url: Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL, description: 'redis://[user[:password]@]host[:port][/db] or rediss:// (TLS)' }),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: NO_NUL, description: 'the Redis password (AUTH); or put it in redis_url. Never answered back' })),
  namespace: Type.Optional(SidekiqNamespace),
});
export type SidekiqFields = Static<typeof SidekiqFields>;

export const NewSidekiqConnection = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: NO_NUL }),
  kind: Type.Literal('sidekiq'),
  ...SidekiqFields.properties,
  interval_s: Type.Optional(Type.Integer({ minimum: 2, maximum: 60 })),
  enabled: Type.Optional(Type.Boolean()),
});
export type NewSidekiqConnection = Static<typeof NewSidekiqConnection>;

const Count = Type.Integer({ minimum: 0 });

/** What Sidekiq's API shows beyond GitLab's compound_metrics; only a sidekiq connection's `current` has it. */
export const SidekiqExtras = Type.Object({
  retry_size: Count,
  scheduled_size: Count,
  dead_size: Count,
  /** Same order as `processes` (Sidekiq's: by identity). */
  process_details: Type.Array(
    Type.Object({
      identity: Type.String(),
      quiet: Type.Boolean({ description: 'the process fetches no more jobs (TSTP, or stopping after TERM): its threads are no spare capacity' }),
      stopping: Type.Optional(Type.Boolean({ description: 'the process hash says "stopping" (Sidekiq 6.4 writes "true" for quiet and stopping alike)' })),
      beat: Type.Number({ description: 'last heartbeat, epoch seconds (Sidekiq writes one every 5 s)' }),
      rss_kb: Count,
    }),
  ),
  days: Type.Object(
    {
      processed: Type.Record(Type.String(), Count),
      failed: Type.Record(Type.String(), Count),
    },
    { description: 'stat:processed:<day> and stat:failed:<day>, UTC days, newest first (Sidekiq::Stats::History)' },
  ),
  queues_total: Type.Integer({ description: 'queues in the `queues` set; more than in `queues` when past --sidekiq-max-queues' }),
  processes_total: Type.Integer({ description: 'members of the `processes` set (dead ones included, as Sidekiq counts them)' }),
});
export type SidekiqExtras = Static<typeof SidekiqExtras>;

export const PeekSet = Type.Union([Type.Literal('retry'), Type.Literal('dead'), Type.Literal('schedule')]);

export const PeekQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
});
export type PeekQuery = Static<typeof PeekQuery>;

export const PeekJob = Type.Object({
  class: Type.String({ description: "the job's class (ActiveJob wrappers: the wrapped class)" }),
  args: Type.String({ description: 'the arguments as JSON, cut to 200 characters' }),
  args_truncated: Type.Boolean(),
  jid: Type.Union([Type.String(), Type.Null()]),
  queue: Type.Union([Type.String(), Type.Null()]),
  enqueued_at: Type.Union([Type.String(), Type.Null()], { description: 'ISO time' }),
  failed_at: Type.Union([Type.String(), Type.Null()]),
  /** The sorted set's score: when it retries (retry), runs (schedule) or died (dead). */
  at: Type.Union([Type.String(), Type.Null()]),
  retry_count: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()], { description: 'error_class: error_message, cut to 500 characters' }),
  unreadable: Type.Boolean({ description: 'the entry is not a JSON job payload; shown as is in args' }),
  key: Type.Union([Type.String(), Type.Null()], { description: "a set entry's key as Sidekiq Web names it (`<score>-<jid>`), what its job page and the action routes take; null in a queue or when it has no jid" }),
});
export type PeekJob = Static<typeof PeekJob>;

export const PeekPage = Type.Object({
  total: Count,
  page: Type.Integer(),
  per_page: Type.Integer(),
  jobs: Type.Array(PeekJob),
  latency: Type.Optional(Type.Number({ description: "a queue's: seconds since its oldest job was enqueued (Sidekiq's Queue#latency), 0 when empty" })),
});
export type PeekPage = Static<typeof PeekPage>;
