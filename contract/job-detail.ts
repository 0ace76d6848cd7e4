// One job opened from a list: a queue's job by jid, or an entry of the retry, scheduled or dead set
// by its key, with every field Sidekiq Web's job page shows (Sidekiq::JobRecord). The same shape
// whichever keeps the job: the embedded job system (SQLite or --redis) or a sidekiq connection.
import { Type, type Static } from '@sinclair/typebox';

const Time = Type.Union([Type.String({ description: 'ISO time' }), Type.Null()]);
const Text = Type.Union([Type.String(), Type.Null()]);

export const JobDetailSet = Type.Union([Type.Literal('retry'), Type.Literal('schedule'), Type.Literal('dead')]);
export type JobDetailSet = Static<typeof JobDetailSet>;

export const JobDetailSetParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  set: JobDetailSet,
  key: Type.String({ minLength: 1, maxLength: 512, description: "the entry's key as Sidekiq Web names it: `<score>-<jid>`" }),
});

export const JobDetailQueueParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  queue: Type.String({ minLength: 1, maxLength: 512 }),
  jid: Type.String({ minLength: 1, maxLength: 256 }),
});

export const JobDetail = Type.Object({
  /** Where it was found: a queue, or one of the three sorted sets. */
  where: Type.Union([Type.Literal('queue'), JobDetailSet]),
  /** The set entry's key (`<score>-<jid>`); null for a queued job. */
  key: Text,
  jid: Text,
  class: Text,
  /** ActiveJob's wrapper class when `class` is the wrapped one; else null. */
  wrapper_class: Text,
  args: Type.Unknown({ description: "the arguments as parsed JSON (ActiveJob's: the wrapped job's); null when unreadable or past the size bound (see args_note)" }),
  args_note: Type.Union([Type.String(), Type.Null()], { description: 'why `args` is null although the job has arguments (too large, too deep): read them in `raw`' }),
  raw: Type.String({ description: 'the payload as stored (JSON text), cut at the server’s bound' }),
  raw_truncated: Type.Boolean(),
  /** The entry is no JSON object: every field but `raw` is null (Sidekiq Web shows such entries too). */
  unreadable: Type.Boolean(),
  queue: Text,
  created_at: Time,
  enqueued_at: Time,
  failed_at: Type.Union([Type.String(), Type.Null()], { description: 'the first failure (Sidekiq keeps it across retries)' }),
  retried_at: Time,
  next_retry_at: Type.Union([Type.String(), Type.Null()], { description: 'retry set: the score' }),
  scheduled_at: Type.Union([Type.String(), Type.Null()], { description: 'scheduled set: the score (when it runs)' }),
  died_at: Type.Union([Type.String(), Type.Null()], { description: 'dead set: the score (when it was killed)' }),
  retry_count: Type.Union([Type.Integer(), Type.Null()]),
  retry: Type.Union([Type.Boolean(), Type.Integer(), Type.Null()], { description: "the retry policy: true (Sidekiq's default, 25), false (none) or the most retries" }),
  error_class: Text,
  error_message: Text,
  backtrace: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "error_backtrace decoded (Sidekiq 6.4: Base64 of zlib-deflated JSON; older: an array); null when the job kept none" }),
  backtrace_note: Type.Union([Type.String(), Type.Null()], { description: 'set when the backtrace could not be decoded (its text stays in `raw`) or was cut' }),
  tags: Type.Array(Type.String()),
  bid: Text,
  /** Queued jobs: seconds since it was enqueued (Sidekiq's Job#latency); null elsewhere. */
  latency: Type.Union([Type.Number(), Type.Null()]),
});
export type JobDetail = Static<typeof JobDetail>;
