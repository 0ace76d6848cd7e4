// The simulator's contract: the scenario format (imported, exported, validated), fleet status,
// journal entries and runner-console exchanges. The app API uses these as route schemas; the
// renderer's client imports their types only; the CLI validates scenario files with them.
import { Type, type Static } from '@sinclair/typebox';

export const FAULT_KINDS = [
  'wrong_range',
  'stale_range',
  'invalid_token',
  'drop_trace',
  'drop_upload',
  'slow_dribble',
  'duplicate_part',
  'out_of_order',
  'die',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const Rate = Type.Number({ minimum: 0, maximum: 1 });

export const Faults = Type.Object(
  {
    wrong_range: Type.Optional(Rate),
    stale_range: Type.Optional(Rate),
    invalid_token: Type.Optional(Rate),
    drop_trace: Type.Optional(Rate),
    drop_upload: Type.Optional(Rate),
    slow_dribble: Type.Optional(Rate),
    duplicate_part: Type.Optional(Rate),
    out_of_order: Type.Optional(Rate),
    die: Type.Optional(Rate),
  },
  {
    additionalProperties: false,
    description:
      'probability of each fault, 0..1: per trace part for wrong_range, stale_range, drop_trace, slow_dribble, duplicate_part, ' +
      'out_of_order; per build for invalid_token, drop_upload, die',
  },
);
export type Faults = Static<typeof Faults>;

/** How a virtual runner behaves; every field has a default (see simulator/behaviour.ts). */
export const Behaviour = Type.Object(
  {
    trace_kb: Type.Optional(Type.Number({ minimum: 0, maximum: 65536, description: 'approximate size of each build log, KiB' })),
    part_kb: Type.Optional(Type.Number({ minimum: 0.0625, maximum: 16384, description: 'largest trace PATCH body, KiB' })),
    rate_kbps: Type.Optional(Type.Number({ minimum: 0, maximum: 1048576, description: 'trace bytes per second, KiB/s; 0 = as fast as the server answers' })),
    update_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600000, description: 'pause between trace ticks (the real runner: 3000)' })),
    poll_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 600000, description: 'pause after an empty poll (the real runner: 3000)' })),
    artifact_kb: Type.Optional(Type.Number({ minimum: 0, maximum: 1048576, description: 'size of the artifacts zip, KiB; 0 = no upload' })),
    fail_rate: Type.Optional(Rate),
    expire_in: Type.Optional(
      Type.String({ maxLength: 100, description: 'expire_in of the upload when the build’s options.artifacts has none, e.g. "1 week"; empty = none (as the runner)' }),
    ),
  },
  { additionalProperties: false },
);
export type Behaviour = Static<typeof Behaviour>;

export const RunnerGroup = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$' })),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 50 })),
    run_untagged: Type.Optional(Type.Boolean()),
    tokens: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: 1000, description: 'use these runner tokens instead of registering' })),
    behaviour: Type.Optional(Behaviour),
    faults: Type.Optional(Faults),
  },
  { additionalProperties: false },
);
export type RunnerGroup = Static<typeof RunnerGroup>;

export const BuildTemplate = Type.Object(
  {
    commands: Type.Optional(Type.String({ maxLength: 65536 })),
    tag_list: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 50 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);

const SHARED_HELP =
  'true: the runners register as shared runners and take any project’s builds. Default: when the fleet creates its builds, its runners register with its project’s runners token, as GitLab’s project runners, and take only that project’s builds';

export const Scenario = Type.Object(
  {
    version: Type.Optional(Type.Literal(1)),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
    builds: Type.Optional(Type.Integer({ minimum: 0, maximum: 100000, description: 'builds to finish; created through the control API when the target is Jobscope' })),
    create_builds: Type.Optional(Type.Boolean({ description: 'create `builds` builds before starting (default true when an admin token is known)' })),
    build_template: Type.Optional(BuildTemplate),
    defaults: Type.Optional(Behaviour),
    faults: Type.Optional(Faults),
    runners: Type.Array(RunnerGroup, { minItems: 1, maxItems: 100 }),
    verify: Type.Optional(Type.Boolean({ description: 'compare traces and artifacts through the control API (needs an admin token)' })),
    shared: Type.Optional(Type.Boolean({ description: SHARED_HELP })),
  },
  { additionalProperties: false },
);
export type Scenario = Static<typeof Scenario>;

export const StartFleet = Type.Object(
  {
    scenario: Type.Optional(Scenario),
    runners: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    builds: Type.Optional(Type.Integer({ minimum: 0, maximum: 100000 })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 50 })),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
    behaviour: Type.Optional(Behaviour),
    faults: Type.Optional(Faults),
    target_url: Type.Optional(Type.String({ maxLength: 2048, description: 'a coordinator speaking runner API v1; default: this server' })),
    registration_token: Type.Optional(Type.String({ maxLength: 512 })),
    admin_token: Type.Optional(Type.String({ maxLength: 512, description: 'PRIVATE-TOKEN of the target, to create builds and verify data' })),
    shared: Type.Optional(Type.Boolean({ description: SHARED_HELP })),
  },
  { additionalProperties: false },
);
export type StartFleet = Static<typeof StartFleet>;

export const RunnerState = Type.Union(
  ['starting', 'registering', 'idle', 'polling', 'running', 'uploading', 'finishing', 'verifying', 'dead', 'stopped'].map((s) => Type.Literal(s)),
);

export const RunnerCounters = Type.Object({
  builds: Type.Integer(),
  success: Type.Integer(),
  failed: Type.Integer(),
  canceled: Type.Integer(),
  abandoned: Type.Integer(),
  requests: Type.Integer(),
  polls_empty: Type.Integer(),
  trace_bytes: Type.Integer(),
  artifact_bytes: Type.Integer(),
  status_416: Type.Integer(),
  faults: Type.Integer(),
  errors: Type.Integer(),
});
export type RunnerCounters = Static<typeof RunnerCounters>;

export const RunnerStatus = Type.Object({
  name: Type.String(),
  runner_id: Type.Union([Type.Integer(), Type.Null()]),
  tags: Type.Array(Type.String()),
  state: Type.String({ description: 'starting, registering, idle, polling, running, uploading, finishing, verifying, dead, stopped' }),
  build_id: Type.Union([Type.Integer(), Type.Null()]),
  progress: Type.Number({ description: 'of the current step (trace or upload), 0..1' }),
  detail: Type.String({ description: 'human text, e.g. "running build 12 (trace 40%)"' }),
  counters: RunnerCounters,
});
export type RunnerStatus = Static<typeof RunnerStatus>;

export const Violation = Type.Object({
  kind: Type.String({ description: 'trace_mismatch, ack_mismatch, artifact_mismatch, double_handout, accepted_invalid_token' }),
  build_id: Type.Union([Type.Integer(), Type.Null()]),
  runner: Type.String(),
  message: Type.String(),
  at: Type.String(),
});
export type Violation = Static<typeof Violation>;

export const FleetTotals = Type.Object({
  builds_done: Type.Integer(),
  success: Type.Integer(),
  failed: Type.Integer(),
  canceled: Type.Integer(),
  abandoned: Type.Integer(),
  trace_bytes: Type.Integer(),
  artifact_bytes: Type.Integer(),
  requests: Type.Integer(),
  status_416: Type.Integer(),
  traces_verified: Type.Integer(),
  artifacts_verified: Type.Integer(),
  faults_injected: Type.Integer(),
});
export type FleetTotals = Static<typeof FleetTotals>;

export const OwnBuilds = Type.Object({
  created: Type.Integer(),
  taken: Type.Integer({ description: 'handed to the fleet’s runners' }),
  success: Type.Integer(),
  failed: Type.Integer(),
  canceled: Type.Integer(),
  running: Type.Integer(),
  pending: Type.Integer({ description: 'not handed to any runner yet (as the server last said)' }),
});
export type OwnBuilds = Static<typeof OwnBuilds>;

export const FleetStatus = Type.Object({
  state: Type.Union([Type.Literal('idle'), Type.Literal('running'), Type.Literal('stopping'), Type.Literal('finished')]),
  id: Type.Union([Type.Integer(), Type.Null()]),
  target: Type.Union([Type.String(), Type.Null()]),
  seed: Type.Union([Type.Integer(), Type.Null()]),
  builds_target: Type.Union([Type.Integer(), Type.Null()]),
  started_at: Type.Union([Type.String(), Type.Null()]),
  finished_at: Type.Union([Type.String(), Type.Null()]),
  duration_s: Type.Number(),
  protocol_broken: Type.Boolean({ description: 'the server lost or corrupted data, or handed a build out twice' }),
  totals: FleetTotals,
  errors_by_kind: Type.Record(Type.String(), Type.Integer()),
  faults_by_kind: Type.Record(Type.String(), Type.Integer()),
  fault_answers: Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer()), {
    description: 'per fault kind, how many times the server answered each status ("0" = no answer)',
  }),
  violations: Type.Array(Violation),
  runners: Type.Array(RunnerStatus),
  message: Type.String(),
  project: Type.Union([Type.String(), Type.Null()], { description: 'the project the fleet created its builds in; null when it created none' }),
  shared: Type.Boolean({ description: 'its runners registered as shared runners (any project’s builds), not as its project’s' }),
  own: Type.Union([OwnBuilds, Type.Null()], { description: 'the builds the fleet created, by what became of them; null when it created none' }),
  others_taken: Type.Integer({ description: 'builds its runners took that it did not create (other projects’, or its project’s from earlier runs)' }),
});
export type FleetStatus = Static<typeof FleetStatus>;

export const Throughput = Type.Object({
  step_s: Type.Integer(),
  t: Type.Array(Type.Integer(), { description: 'bucket starts, epoch ms' }),
  builds_per_min: Type.Array(Type.Number()),
  trace_bytes_per_s: Type.Array(Type.Number()),
  requests_per_s: Type.Array(Type.Number()),
});
export type Throughput = Static<typeof Throughput>;

export const ThroughputQuery = Type.Object({
  minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
  step_s: Type.Optional(Type.Integer({ minimum: 1, maximum: 600 })),
});
export type ThroughputQuery = Static<typeof ThroughputQuery>;

const HeaderList = Type.Array(Type.Tuple([Type.String(), Type.String()]), { description: '[name, value] pairs as sent or received' });

export const BodyPreview = Type.Object({
  size: Type.Integer({ description: 'bytes on the wire (-1 unknown)' }),
  text: Type.Optional(Type.String({ description: 'the body when it is UTF-8 text' })),
  base64: Type.Optional(Type.String({ description: 'the body when it is binary' })),
  truncated: Type.Boolean({ description: 'only the first bytes were kept' }),
});
export type BodyPreview = Static<typeof BodyPreview>;

export const JournalEntry = Type.Object({
  id: Type.Integer(),
  started_at: Type.String(),
  duration_ms: Type.Number(),
  runner: Type.String(),
  method: Type.String(),
  url: Type.String(),
  path: Type.String(),
  status: Type.Integer({ description: '0 when no answer came (connection dropped, refused, timed out)' }),
  request_headers: HeaderList,
  response_headers: HeaderList,
  request_body: BodyPreview,
  response_body: BodyPreview,
  fault: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  build_id: Type.Union([Type.Integer(), Type.Null()]),
});
export type JournalEntry = Static<typeof JournalEntry>;

export const JournalQuery = Type.Object({
  runner: Type.Optional(Type.String({ maxLength: 200 })),
  status: Type.Optional(Type.String({ maxLength: 20, description: 'exact code (416), a class (4xx), or 0 for no answer' })),
  method: Type.Optional(Type.String({ maxLength: 10 })),
  path: Type.Optional(Type.String({ maxLength: 500, description: 'substring of the path' })),
  fault: Type.Optional(Type.String({ maxLength: 50, description: 'fault tag, or "any"' })),
  build_id: Type.Optional(Type.Integer({ minimum: 0 })),
  since_id: Type.Optional(Type.Integer({ minimum: 0, description: 'only entries with a larger id (for live tailing)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000 })),
  include_secrets: Type.Optional(Type.Boolean({ description: 'show tokens as recorded; by default every token (headers, query, bodies, answers) reads [REDACTED]' })),
});
export type JournalQuery = Static<typeof JournalQuery>;

export const SecretsQuery = Type.Object({ include_secrets: JournalQuery.properties.include_secrets });
export type SecretsQuery = Static<typeof SecretsQuery>;

export const JournalPage = Type.Object({
  total: Type.Integer({ description: 'entries held (the journal is a ring buffer)' }),
  dropped: Type.Integer({ description: 'entries pushed out by newer ones' }),
  entries: Type.Array(JournalEntry),
});
export type JournalPage = Static<typeof JournalPage>;

export const Curl = Type.Object({ id: Type.Integer(), curl: Type.String(), complete: Type.Boolean({ description: 'false when the body was cut and the command will not resend it exactly' }) });
export type Curl = Static<typeof Curl>;

// ---- Runner console: act as one runner by hand, see every raw exchange.

export const ConsoleExchange = Type.Object({
  request: Type.Object({ method: Type.String(), url: Type.String(), headers: HeaderList, body: BodyPreview }),
  response: Type.Union([Type.Null(), Type.Object({ status: Type.Integer(), status_text: Type.String(), headers: HeaderList, body: BodyPreview })]),
  error: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Number(),
  journal_id: Type.Integer(),
  state: Type.Object({
    target: Type.String(),
    runner_token: Type.Union([Type.String(), Type.Null()]),
    build_id: Type.Union([Type.Integer(), Type.Null()]),
    build_token: Type.Union([Type.String(), Type.Null()]),
    trace_length: Type.Integer({ description: 'what the server last said the trace length is (Range)' }),
  }),
});
export type ConsoleExchange = Static<typeof ConsoleExchange>;

const Target = { target_url: Type.Optional(Type.String({ maxLength: 2048 })) };

export const ConsoleRegister = Type.Object({
  ...Target,
  registration_token: Type.Optional(Type.String({ maxLength: 512, description: 'default: this server’s' })),
  runner_token: Type.Optional(Type.String({ maxLength: 512, description: 'use this token instead of registering' })),
  description: Type.Optional(Type.String({ maxLength: 1024 })),
  tag_list: Type.Optional(Type.String({ maxLength: 4096 })),
  run_untagged: Type.Optional(Type.Boolean()),
});
export type ConsoleRegister = Static<typeof ConsoleRegister>;

export const ConsoleTrace = Type.Object({
  content_range: Type.Optional(Type.String({ maxLength: 200, description: 'default: "<server length>-<server length + body bytes>"' })),
  body: Type.String({ maxLength: 16 * 1024 * 1024 }),
  build_token: Type.Optional(Type.String({ maxLength: 512 })),
  build_id: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type ConsoleTrace = Static<typeof ConsoleTrace>;

export const ConsoleUpdate = Type.Object({
  state: Type.Optional(Type.String({ maxLength: 50 })),
  trace: Type.Optional(Type.String({ maxLength: 64 * 1024 * 1024 })),
  build_id: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type ConsoleUpdate = Static<typeof ConsoleUpdate>;

export const ConsoleUpload = Type.Object({
  filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  content_base64: Type.String({ maxLength: 150 * 1024 * 1024, description: 'the file’s bytes' }),
  expire_in: Type.Optional(Type.String({ maxLength: 100 })),
  build_id: Type.Optional(Type.Integer({ minimum: 1 })),
  build_token: Type.Optional(Type.String({ maxLength: 512 })),
});
export type ConsoleUpload = Static<typeof ConsoleUpload>;

export const ConsoleBuildRef = Type.Object({
  build_id: Type.Optional(Type.Integer({ minimum: 1 })),
  build_token: Type.Optional(Type.String({ maxLength: 512 })),
});
export type ConsoleBuildRef = Static<typeof ConsoleBuildRef>;
