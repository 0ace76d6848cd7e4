// The app API (/api/app/*): what the dashboard needs beyond the GitLab-compatible APIs —
// connections to watch, their sampled history, thresholds and alerts. Admin PRIVATE-TOKEN.
// The renderer's typed client imports these types (types only).
import { Type, type Static } from '@sinclair/typebox';
import { CompoundMetrics } from './metrics.ts';
import { SidekiqExtras } from './sidekiq.ts';
import { NO_NUL } from './text.ts';

export const ApiVersion = Type.Union([Type.Literal('v3'), Type.Literal('v4')]);

export const ConnectionView = Type.Object({
  id: Type.String({ description: '"embedded" for this server, a generated id for remote GitLab instances and sidekiq connections' }),
  name: Type.String(),
  kind: Type.Union([Type.Literal('embedded'), Type.Literal('gitlab'), Type.Literal('sidekiq')]),
  base_url: Type.Union([Type.String(), Type.Null()], { description: "GitLab's base URL; a sidekiq connection's Redis URL (never with its password)" }),
  namespace: Type.Optional(Type.String({ description: "sidekiq connections: redis-namespace's prefix, '' for none" })),
  api_version: ApiVersion,
  segment: Type.String({ description: 'path segment of the metrics API: "sidekiq" (GitLab) or another' }),
  interval_s: Type.Integer({ minimum: 2, maximum: 60 }),
  enabled: Type.Boolean(),
  allow_changes: Type.Boolean({
    description: "actions that write to the connection's jobs and processes (retry, delete, kill, quiet…) are allowed: a sidekiq connection only once the user turned it on; the embedded one always; a GitLab one never",
  }),
  has_token: Type.Boolean({ description: 'the token (a sidekiq connection: the Redis password) itself never leaves the backend' }),
  warnings: Type.Array(Type.String(), { description: 'risks of this connection as configured, e.g. a token sent over plain http to another machine' }),
  last_sample_at: Type.Union([Type.String(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});
export type ConnectionView = Static<typeof ConnectionView>;

export const NewConnection = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: NO_NUL }),
  base_url: Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL, description: 'e.g. https://gitlab.example.com' }),
  private_token: Type.String({ minLength: 1, maxLength: 512, pattern: NO_NUL }),
  api_version: Type.Optional(ApiVersion),
  segment: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
  interval_s: Type.Optional(Type.Integer({ minimum: 2, maximum: 60 })),
  enabled: Type.Optional(Type.Boolean()),
});
export type NewConnection = Static<typeof NewConnection>;

export const ConnectionPatch = Type.Composite([
  Type.Partial(NewConnection),
  Type.Object({ allow_changes: Type.Optional(Type.Boolean({ description: "a sidekiq connection only: allow actions that write to its Redis (off by default; moving redis_url to another server turns it off again unless given)" })) }),
]);
export type ConnectionPatch = Static<typeof ConnectionPatch>;

export const TestResult = Type.Object({
  ok: Type.Boolean(),
  warning: Type.Optional(Type.Boolean({ description: 'reachable, but nothing to watch there (a sidekiq connection: no Sidekiq data under its namespace); `message` says what to check' })),
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status from the remote, null when it was not reached' }),
  message: Type.String({ description: 'what happened, and what to do next when it failed' }),
  latency_ms: Type.Number(),
  sample: Type.Union([CompoundMetrics, Type.Null()]),
});
export type TestResult = Static<typeof TestResult>;

export const HistoryQuery = Type.Object({
  from: Type.Integer({ description: 'epoch ms; read clamped into 0..8.64e15 (what a Date holds)' }),
  to: Type.Integer({ description: 'epoch ms; read clamped into 0..8.64e15' }),
  points: Type.Optional(Type.Integer({ minimum: 10, maximum: 5000, default: 1000 })),
  queues: Type.Optional(Type.String({ description: 'comma-separated queue names; default: the top queues by peak backlog' })),
  top: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 8 })),
});
export type HistoryQuery = Static<typeof HistoryQuery>;

const Series = Type.Array(Type.Union([Type.Number(), Type.Null()]), { description: 'one value per bucket of `t`; null = gap (failed or missing sample)' });

export const History = Type.Object({
  from: Type.Integer(),
  to: Type.Integer(),
  step_ms: Type.Integer({ description: 'bucket width; the samples in a bucket are averaged (counters: last value)' }),
  t: Type.Array(Type.Integer(), { description: 'bucket start times, epoch ms' }),
  totals: Type.Object({
    processed: Series,
    failed: Series,
    enqueued: Series,
    busy: Series,
    concurrency: Series,
    processes: Series,
    processed_rate: Series, // jobs/s from counter deltas
    failed_rate: Series,
  }),
  queues: Type.Record(Type.String(), Type.Object({ backlog: Series, latency: Series })),
  sets: Type.Optional(
    Type.Object(
      { retry: Series, scheduled: Series, dead: Series },
      { description: "Sidekiq's Retries, Scheduled and Dead sizes (bucket averages): only when a sample in the range had them (sidekiq connections, the embedded one)" },
    ),
  ),
  queue_names: Type.Array(Type.String(), { description: 'every queue seen in the range, by peak backlog, highest first' }),
  gaps: Type.Array(Type.Object({ t: Type.Integer(), error: Type.String(), count: Type.Integer({ minimum: 1, description: 'failed samples in the bucket (the first one’s error is `error`)' }) })),
  queues_untracked: Type.Optional(
    Type.Integer({ description: 'queues of the latest sample that history did not record: it records at most history_max_queues per sample (those it already had first), the rest are not sampled' }),
  ),
  history_max_queues: Type.Optional(Type.Integer({ description: '--history-max-queues' })),
});
export type History = Static<typeof History>;

export const ThresholdRule = Type.Object({
  latency: Type.Optional(Type.Number({ minimum: 0, description: 'seconds' })),
  backlog: Type.Optional(Type.Integer({ minimum: 0 })),
});
export const Thresholds = Type.Object({
  queues: Type.Record(Type.String(), ThresholdRule),
  default: Type.Optional(ThresholdRule),
  failure_rate: Type.Optional(Type.Number({ minimum: 0, description: 'failed jobs per second' })),
});
export type Thresholds = Static<typeof Thresholds>;

export const Alert = Type.Object(
  {
    id: Type.Integer(),
    connection_id: Type.String(),
    connection_name: Type.String({ description: 'the connection\'s name now (say this, not the id)' }),
    kind: Type.Union([Type.Literal('latency'), Type.Literal('backlog'), Type.Literal('failure_rate')], { description: 'the rule crossed' }),
    queue: Type.Union([Type.String(), Type.Null()], { description: 'the queue it is about; null for the connection as a whole (failure rate)' }),
    value: Type.Number({ description: 'the value when it fired' }),
    threshold: Type.Number(),
    state: Type.Union([Type.Literal('firing'), Type.Literal('resolved')]),
    fired_at: Type.String(),
    resolved_at: Type.Union([Type.String(), Type.Null()], { description: 'the first sample back under the threshold, or without its queue or rule; null while firing' }),
    acknowledged_at: Type.Union([Type.String(), Type.Null()], { description: 'when a user acknowledged it (the banner stops showing it); null when nobody did' }),
  },
  { description: 'fires when a sample crosses a threshold, resolves at the first sample back under it (or without its queue or rule); a later crossing is a new alert' },
);
export type Alert = Static<typeof Alert>;

export const AppStatus = Type.Object({
  version: Type.String(),
  mode: Type.Union([Type.Literal('electron'), Type.Literal('browser'), Type.Literal('serve'), Type.Literal('test')]),
  data_dir: Type.String(),
  started_at: Type.String(),
  ui_refresh_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'when > 0, the UI asks for new data at this interval instead of its own paces (--ui-refresh-ms: tests, demos)' })),
  job_system: Type.Object(
    {
      state: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
      message: Type.Optional(Type.String({ description: 'while degraded: what is wrong (e.g. waiting for Redis at host:port: the reason) and what happens meanwhile; the UI shows it as a banner' })),
    },
    { description: 'with --redis: `degraded` while its Redis cannot be reached (at start or in an outage); job routes answer 503 meanwhile and it recovers by itself' },
  ),
});
export type AppStatus = Static<typeof AppStatus>;

/** Sidekiq's Retries, Scheduled and Dead sizes of a connection that is no sidekiq one (the embedded job system). */
export const JobSetSizes = Type.Object({
  retry_size: Type.Integer({ minimum: 0 }),
  scheduled_size: Type.Integer({ minimum: 0 }),
  dead_size: Type.Integer({ minimum: 0 }),
});
export type JobSetSizes = Static<typeof JobSetSizes>;

/** The latest good sample of a connection: compound_metrics as read, and when. */
export const CurrentSample = Type.Object({
  at: Type.String({ description: 'ISO time of the sample' }),
  queues: CompoundMetrics.properties.queues,
  processes: CompoundMetrics.properties.processes,
  jobs: CompoundMetrics.properties.jobs,
  sidekiq: Type.Optional(SidekiqExtras),
  sets: Type.Optional(JobSetSizes),
});
export type CurrentSample = Static<typeof CurrentSample>;

export const AlertsQuery = Type.Object({
  since: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'answer alerts with a larger id only' })),
  connection_id: Type.Optional(Type.String({ maxLength: 64 })),
});
export type AlertsQuery = Static<typeof AlertsQuery>;

export const AlertBoardQuery = Type.Object({
  resolved: Type.Optional(Type.Integer({ minimum: 0, maximum: 500, default: 50, description: 'how many of the most recently resolved alerts to answer' })),
});
export type AlertBoardQuery = Static<typeof AlertBoardQuery>;

export const AlertBoard = Type.Object({
  firing: Type.Array(Alert, { description: 'the alerts firing now, acknowledged or not, oldest first (at most 1000)' }),
  resolved: Type.Array(Alert, { description: 'the most recently resolved, newest first' }),
});
export type AlertBoard = Static<typeof AlertBoard>;

export const AlertIdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });
export type AlertIdParams = Static<typeof AlertIdParams>;
