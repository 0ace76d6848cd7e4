// The config schema: every setting of the server in one table (SETTINGS): its flag, its JOBSCOPE_*
// variable, its default. The CLI, the Electron shell and the tests all build a Config through
// `resolveConfig`, so a knob added here is a flag, an environment variable and a documented default
// at once, and a saved setting: <data dir>/settings.json is read here at start and written by
// server/settings-api/saved-settings.ts. Not settings: the instance's tokens (store/sqlite/secrets.ts).
import fs from 'node:fs';
import path from 'node:path';
import { isLoopbackHost, unbindableHostProblem } from './host-address.ts';
import { PgStoreError, checkUrl } from './store/database-url.ts';
import { outboundAllowProblem } from './outbound/policy.ts';
import { parseQueueOrder } from './jobs/queue-order.ts';

/**
 * Why a --database value cannot be used, or null. Only a URL with a host (postgres://…@host/…) is
 * ever echoed, through checkUrl's redactUrl: in anything else (`u:pw@h/db`, `postgres:u:pw@h/db`) the
 * URL parser does not see the password as one, and redactUrl would print it.
 */
function databaseUrlProblem(raw: string): string | null {
  const form = 'write it as postgres://user:password@host:5432/database, with any @ : / # ? or space in the user or password percent-encoded (%40 for @)';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return `not a URL: ${form}.`;
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') return `not a postgres:// URL: ${form}.`;
  if (!u.host) return `no host after postgres://: ${form}.`;
  try {
    checkUrl(raw);
  } catch (err) {
    if (err instanceof PgStoreError) return err.message;
    throw err;
  }
  return null;
}

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** Fixed admin token; undefined = generated once and kept in the data dir. */
  adminToken?: string;
  /** Fixed instance-wide runner registration token; undefined = generated once. */
  registrationToken?: string;
  maxArtifactBytes: number;
  maxTraceBytes: number;
  /** Longest artifacts expiry kept; a longer expire_in is cut to it, days. */
  maxArtifactExpireDays: number;
  /** Most bytes one request may create as builds: count × the size of one build. */
  maxBuildBatchBytes: number;
  /** Also fsync trace, artifact and database writes (survive power loss, not just kill -9). */
  fsync: boolean;
  /** Start the demo load generator at boot. */
  demo: boolean;
  /** Serve the built UI at `/` from this folder when it exists. */
  uiDir?: string;
  /** Log level for the server's own log (pino levels); 'silent' writes no log file. */
  logLevel: string;
  /** Not a flag: the headless host copies warnings and errors to stderr. */
  logToStderr?: boolean;
  /** Not a flag: saved settings that were ignored at start (and why), or that widen exposure. */
  settingsWarnings?: string[];
  /** Which host runs this server; shown in /api/app/status. */
  mode: 'electron' | 'browser' | 'serve' | 'test';
  /** Days of sampled history kept (1-minute resolution past the raw window). */
  historyDays: number;
  /** Hours of full-resolution samples kept before only the 1-minute rollups remain. */
  historyRawHours: number;
  /** Resolved alerts kept (the most recent); firing ones are always kept. */
  alertsKeepResolved: number;
  /** Timeout of one request to a remote GitLab, ms. */
  remoteTimeoutMs: number;
  /** A sidekiq connection's Redis read (connect + the read script or pipelines) must finish within this, ms. */
  sidekiqTimeoutMs: number;
  /** Most queues and processes one sample of a sidekiq connection reads (the rest are counted, not read). */
  sidekiqMaxQueues: number;
  sidekiqMaxProcesses: number;
  /** Most jobs of one queue a job page looks through for a jid before it gives up (a page of LRANGE at a time). */
  jobSearchMax: number;
  /** Most bytes and elements of one Redis reply, on every Redis client (sidekiq connections, --redis): past it that connection is dropped. */
  redisMaxReplyBytes: number;
  redisMaxReplyElements: number;
  /** A --redis job backend command without its reply after this long fails, ms. */
  redisCommandTimeoutMs: number;
  /** Longest queue name a sample stores, bytes (UTF-8); longer ones are counted, not stored. */
  sampleMaxNameBytes: number;
  /** Most queues, and most processes, one sample stores; the rest are counted. */
  sampleMaxEntries: number;
  /** Most bytes of names and labels one sample stores, KiB. */
  sampleMaxKib: number;
  /** When > 0, every connection is sampled at this interval (ms) instead of its own: for tests and demos. */
  monitorIntervalMs: number;
  /** When > 0, the UI asks for new data at this interval (ms) instead of its own paces: for tests and demos. */
  uiRefreshMs: number;
  /** Worker slots of the server's own job pool (Sidekiq's concurrency). */
  jobConcurrency: number;
  /** What one "second" of Sidekiq's retry backoff lasts, ms: tests shrink it to make retries fast. */
  jobBackoffUnitMs: number;
  /** How often due retries are moved back into their queues, ms. */
  jobPollMs: number;
  /** Most jobs kept in the dead set; the oldest are dropped beyond it. */
  jobDeadMax: number;
  /** Period of the stuck-build check, ms (0 = off). */
  stuckBuildsEveryMs: number;
  /** Period of the artifact expiry sweep, ms (0 = off). */
  artifactExpiryEveryMs: number;
  /** Period of the runner contact check, ms (0 = off). */
  runnerContactEveryMs: number;
  /** A runner silent this long is shown offline, ms. */
  runnerOfflineAfterMs: number;
  /** Exchanges kept in the simulator's journal (a ring buffer). */
  simJournalEntries: number;
  /** Bytes of each request/response body the simulator's journal keeps. */
  simJournalBodyBytes: number;
  /** Most entries of an artifacts archive's listing kept (the count of all is kept too). */
  artifactListingMaxEntries: number;
  /** Most bytes of entry names an archive's listing keeps, in total. */
  artifactListingMaxNameBytes: number;
  /** Most durable queues; the job API refuses to create more. */
  maxQueues: number;
  /** An empty queue of synthetic jobs idle this long is forgotten, minutes (0 = never). */
  queueForgetIdleMinutes: number;
  /** Most queues each history sample records; queues past it are not sampled. */
  historyMaxQueues: number;
  /** Host header values served besides loopback names and the bound address, comma-separated. */
  allowedHosts?: string;
  /** Hosts, addresses and networks outbound calls may reach besides the default ("*" = all); server/outbound/policy.ts. */
  outboundAllow?: string;
  /** Most remote connections (GitLab and sidekiq) watched at once. */
  maxWatchedConnections: number;
  /** Shortest interval a connection may be sampled at, s. */
  minConnectionIntervalS: number;
  /** The request line and headers must arrive within this, ms. */
  headersTimeoutMs: number;
  /** Window of the body progress rule (see http/timeouts.ts), ms. */
  bodyTimeoutMs: number;
  /** How long a connection closed after an early answer keeps reading the body's rest (lingering close), ms. */
  lingeringCloseMs: number;
  /** Average rate a body must keep over every --body-timeout-ms window, bytes/s (0 = whole within one window). */
  bodyMinBytesPerS: number;
  /** A connection silent this long (nothing read or written) while a request is open is closed, ms. */
  idleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this, ms. */
  keepAliveTimeoutMs: number;
  /** Open connections at most, all clients together (0 = from the open-file limit, http/connection-caps.ts). */
  maxConnections: number;
  /** Open connections at most from one client address (0 = a quarter of the overall cap). */
  maxConnectionsPerAddress: number;
  /** Largest runner request body read before its token is checked, KiB. */
  maxRunnerBodyKib: number;
  /** Request bodies held in memory at once, across all requests, bytes. */
  maxInflightBodyBytes: number;
  /** Period of the database's WAL checkpoint (copied back and truncated), ms (0 = only SQLite's automatic one). */
  walCheckpointEveryMs: number;
  /** Largest UI state document (/api/app/ui-state) kept, KiB. */
  maxUiStateKib: number;
  /** redis:// URL: the job system lives in this Redis in Sidekiq's layout; undefined = SQLite. */
  redisUrl: string | undefined;
  /** TTL of this process's heartbeat hash in Redis (Sidekiq's 60 s); a process silent this long is dead and its jobs run again. */
  redisProcessTtlS: number;
  /** How often this process writes its heartbeat to Redis, ms; 0 = as Sidekiq: every 5 s, or TTL/3 if shorter. */
  redisBeatMs: number;
  /** With --redis: the queues this server serves, Sidekiq's `-q name[,weight]` (jobs/queue-order.ts); undefined = every queue Jobscope created and its own. */
  jobQueues: string | undefined;
  /** postgres:// URL: builds, runners, projects and users live in this database, shared by every instance given it; undefined = SQLite in the data dir. */
  database: string | undefined;
  /** With a database: how long a request waits for a connection of the pool (and a connect may take), ms. */
  databaseConnectTimeoutMs: number;
  /** With a database: the server cancels a statement running longer (statement_timeout), ms; 0 = none. */
  databaseStatementTimeoutMs: number;
}

type Kind = 'string' | 'int' | 'bool' | 'mb';

export interface SettingSpec {
  key: keyof Config;
  flag: string;
  env: string;
  kind: Kind;
  default: string | number | boolean | undefined;
  help: string;
  /** The only values a string setting takes. */
  choices?: readonly string[];
  /** Bounds of an int or mb setting (mb in MiB); rows without them get BOUNDS_BY_KIND. */
  min?: number;
  max?: number;
}

// Every number has a ceiling, so no row (new ones included) accepts 1e15. Timers in Node overflow
// past 2^31-1 ms (and then fire after 1 ms); 1 TiB is far past any artifact or trace.
const BOUNDS_BY_KIND: Partial<Record<Kind, { min: number; max: number }>> = { int: { min: 0, max: 2_147_483_647 }, mb: { min: 0, max: 1_048_576 } };

/** The range a number setting accepts, in the units its flag takes (MiB for mb). */
export function boundsOf(spec: SettingSpec): { min: number; max: number } | null {
  const generic = BOUNDS_BY_KIND[spec.kind];
  return generic ? { min: spec.min ?? generic.min, max: spec.max ?? generic.max } : null;
}

export const SETTINGS: SettingSpec[] = [
  { key: 'host', flag: '--host <host>', env: 'JOBSCOPE_HOST', kind: 'string', default: '127.0.0.1', help: 'address to bind; keep 127.0.0.1 unless other machines must reach it' },
  { key: 'port', flag: '--port <port>', env: 'JOBSCOPE_PORT', kind: 'int', default: 8090, help: 'TCP port; 0 picks any free port', max: 65535 },
  { key: 'dataDir', flag: '--data-dir <dir>', env: 'JOBSCOPE_DATA_DIR', kind: 'string', default: './jobscope-data', help: 'folder holding the database, traces, artifacts and tokens' },
  { key: 'adminToken', flag: '--admin-token <token>', env: 'JOBSCOPE_ADMIN_TOKEN', kind: 'string', default: undefined, help: 'admin PRIVATE-TOKEN (default: generated once, kept in the data dir)' },
  { key: 'registrationToken', flag: '--registration-token <token>', env: 'JOBSCOPE_REGISTRATION_TOKEN', kind: 'string', default: undefined, help: 'instance-wide runner registration token (default: generated once)' },
  { key: 'maxArtifactBytes', flag: '--max-artifact-mb <mb>', env: 'JOBSCOPE_MAX_ARTIFACT_MB', kind: 'mb', default: 100, help: 'artifacts uploads of this size or larger are refused with 413 (as GitLab), in MiB' },
  { key: 'maxTraceBytes', flag: '--max-trace-mb <mb>', env: 'JOBSCOPE_MAX_TRACE_MB', kind: 'mb', default: 64, help: 'largest build trace accepted, in MiB' },
  { key: 'maxArtifactExpireDays', flag: '--max-artifact-expire-days <days>', env: 'JOBSCOPE_MAX_ARTIFACT_EXPIRE_DAYS', kind: 'int', default: 36525, help: 'longest artifacts expiry: a longer expire_in is cut to this many days (at most 36525, 100 years)', min: 1, max: 36525 },
  { key: 'maxBuildBatchBytes', flag: '--max-build-batch-mb <mb>', env: 'JOBSCOPE_MAX_BUILD_BATCH_MB', kind: 'mb', default: 16, help: 'most one request may create as builds (count × the size of one build), in MiB; more is refused with 413', min: 1, max: 4096 },
  { key: 'fsync', flag: '--fsync', env: 'JOBSCOPE_FSYNC', kind: 'bool', default: false, help: 'fsync every acknowledged write (power-loss safe; slower). Without it writes survive kill -9' },
  { key: 'demo', flag: '--demo', env: 'JOBSCOPE_DEMO', kind: 'bool', default: false, help: 'start the demo load generator (simulated workers and queues)' },
  { key: 'uiDir', flag: '--ui-dir <dir>', env: 'JOBSCOPE_UI_DIR', kind: 'string', default: undefined, help: 'folder of the built UI to serve at / (default: dist/renderer when built)' },
  { key: 'logLevel', flag: '--log-level <level>', env: 'JOBSCOPE_LOG_LEVEL', kind: 'string', default: 'info', help: 'log level of <data dir>/logs/jobscope.log: silent, fatal, error, warn, info, debug', choices: ['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'] },
  { key: 'mode', flag: '--mode <mode>', env: 'JOBSCOPE_MODE', kind: 'string', default: 'serve', help: 'host reported in /api/app/status: electron, browser, serve or test', choices: ['electron', 'browser', 'serve', 'test'] },
  { key: 'historyDays', flag: '--history-days <days>', env: 'JOBSCOPE_HISTORY_DAYS', kind: 'int', default: 7, help: 'days of sampled dashboard history kept (1-minute resolution past the raw window)', min: 1, max: 3650 },
  { key: 'historyRawHours', flag: '--history-raw-hours <hours>', env: 'JOBSCOPE_HISTORY_RAW_HOURS', kind: 'int', default: 24, help: 'hours of full-resolution samples kept', min: 1, max: 8760 },
  { key: 'alertsKeepResolved', flag: '--alerts-keep-resolved <n>', env: 'JOBSCOPE_ALERTS_KEEP_RESOLVED', kind: 'int', default: 500, help: 'resolved alerts kept for the alerts list (the most recent; older ones are dropped); alerts still firing are always kept', min: 1, max: 100_000 },
  { key: 'remoteTimeoutMs', flag: '--remote-timeout-ms <ms>', env: 'JOBSCOPE_REMOTE_TIMEOUT_MS', kind: 'int', default: 10000, help: 'timeout of one request to a remote GitLab, in ms', min: 1, max: 600_000 },
  { key: 'sidekiqTimeoutMs', flag: '--sidekiq-timeout-ms <ms>', env: 'JOBSCOPE_SIDEKIQ_TIMEOUT_MS', kind: 'int', default: 5000, help: 'a sidekiq connection\'s Redis read (connect and the reads) must finish within this, in ms; else the sample fails with a message', min: 1, max: 600_000 },
  { key: 'sidekiqMaxQueues', flag: '--sidekiq-max-queues <n>', env: 'JOBSCOPE_SIDEKIQ_MAX_QUEUES', kind: 'int', default: 10000, help: 'most queues one sample of a sidekiq connection reads (by name; the rest are counted in queues_total)', min: 1, max: 1_000_000 },
  { key: 'sidekiqMaxProcesses', flag: '--sidekiq-max-processes <n>', env: 'JOBSCOPE_SIDEKIQ_MAX_PROCESSES', kind: 'int', default: 5000, help: 'most processes one sample of a sidekiq connection reads (the rest are counted in processes_total)', min: 1, max: 1_000_000 },
  { key: 'jobSearchMax', flag: '--job-search-max <n>', env: 'JOBSCOPE_JOB_SEARCH_MAX', kind: 'int', default: 10000, help: 'most jobs of one queue a job page looks through for the job asked for (100 per read) before it answers that it gave up', min: 100, max: 10_000_000 },
  // Bounds on every Redis reply (server/redis/reply-guard.ts): Jobscope's own reads stay far below
  // them (a sidekiq read asks for at most a few hundred elements per call); a reply past them is a
  // broken or hostile server, and only its connection is dropped.
  { key: 'redisMaxReplyBytes', flag: '--redis-max-reply-mb <mb>', env: 'JOBSCOPE_REDIS_MAX_REPLY_MB', kind: 'mb', default: 64, help: 'largest Redis reply accepted (sidekiq connections and --redis), in MiB; a larger one fails that read and drops that connection', min: 1, max: 4096 },
  { key: 'redisMaxReplyElements', flag: '--redis-max-reply-elements <n>', env: 'JOBSCOPE_REDIS_MAX_REPLY_ELEMENTS', kind: 'int', default: 1_000_000, help: 'most elements of one Redis reply accepted (sidekiq connections and --redis); more fails that read and drops that connection', min: 1000, max: 100_000_000 },
  { key: 'redisCommandTimeoutMs', flag: '--redis-command-timeout-ms <ms>', env: 'JOBSCOPE_REDIS_COMMAND_TIMEOUT_MS', kind: 'int', default: 5000, help: 'with --redis: a Redis command without its reply after this long fails (a frozen Redis), in ms', min: 100, max: 600_000 },
  { key: 'sampleMaxNameBytes', flag: '--sample-max-name-bytes <n>', env: 'JOBSCOPE_SAMPLE_MAX_NAME_BYTES', kind: 'int', default: 256, help: 'longest queue name a connection\'s sample stores, in bytes (UTF-8); queues with longer names are counted as untracked, not stored', min: 16, max: 65536 },
  { key: 'sampleMaxEntries', flag: '--sample-max-entries <n>', env: 'JOBSCOPE_SAMPLE_MAX_ENTRIES', kind: 'int', default: 10000, help: 'most queues, and most processes, one sample of a connection stores (the dashboard\'s current view); the rest are counted as untracked', min: 1, max: 1_000_000 },
  { key: 'sampleMaxKib', flag: '--sample-max-kib <kib>', env: 'JOBSCOPE_SAMPLE_MAX_KIB', kind: 'int', default: 2048, help: 'most bytes of names, host names and labels one sample of a connection stores, in KiB; queues and processes past it are counted as untracked', min: 16, max: 1_048_576 },
  { key: 'monitorIntervalMs', flag: '--monitor-interval-ms <ms>', env: 'JOBSCOPE_MONITOR_INTERVAL_MS', kind: 'int', default: 0, help: 'sample every connection at this interval instead of its own (tests, demos); 0 = each connection\'s interval' },
  // The UI's own paces suit a person (the dashboard at its connection's interval but at least 2 s,
  // alerts every 2-5 s); against --monitor-interval-ms 250 an e2e test waited seconds for each change
  // the server already had. Served in /api/app/status, so the UI needs no build of its own for tests.
  { key: 'uiRefreshMs', flag: '--ui-refresh-ms <ms>', env: 'JOBSCOPE_UI_REFRESH_MS', kind: 'int', default: 0, help: 'the UI asks for new data (dashboard, alerts, lists) at this interval instead of its own paces (tests, demos); 0 = its own paces', max: 60_000 },
  { key: 'jobConcurrency', flag: '--job-concurrency <n>', env: 'JOBSCOPE_JOB_CONCURRENCY', kind: 'int', default: 10, help: 'worker slots of the server\'s own job pool', min: 1, max: 1000 },
  { key: 'jobBackoffUnitMs', flag: '--job-backoff-unit-ms <ms>', env: 'JOBSCOPE_JOB_BACKOFF_UNIT_MS', kind: 'int', default: 1000, help: 'length of one "second" of the retry backoff (n^4 + 15 + rand(30)*(n+1)); shrink for tests' },
  { key: 'jobPollMs', flag: '--job-poll-ms <ms>', env: 'JOBSCOPE_JOB_POLL_MS', kind: 'int', default: 1000, help: 'how often due retries go back into their queues, in ms', min: 1 },
  { key: 'jobDeadMax', flag: '--job-dead-max <n>', env: 'JOBSCOPE_JOB_DEAD_MAX', kind: 'int', default: 10000, help: 'most jobs kept in the dead set (oldest dropped first)', max: 10_000_000 },
  { key: 'stuckBuildsEveryMs', flag: '--stuck-builds-every-ms <ms>', env: 'JOBSCOPE_STUCK_BUILDS_EVERY_MS', kind: 'int', default: 60000, help: 'how often running builds past their timeout are failed, in ms; 0 = never' },
  { key: 'artifactExpiryEveryMs', flag: '--artifact-expiry-every-ms <ms>', env: 'JOBSCOPE_ARTIFACT_EXPIRY_EVERY_MS', kind: 'int', default: 60000, help: 'how often artifacts past expire_in are removed, in ms; 0 = never' },
  { key: 'runnerContactEveryMs', flag: '--runner-contact-every-ms <ms>', env: 'JOBSCOPE_RUNNER_CONTACT_EVERY_MS', kind: 'int', default: 60000, help: 'how often silent runners are marked offline, in ms; 0 = never' },
  { key: 'runnerOfflineAfterMs', flag: '--runner-offline-after-ms <ms>', env: 'JOBSCOPE_RUNNER_OFFLINE_AFTER_MS', kind: 'int', default: 3600000, help: 'a runner silent this long is offline, in ms (GitLab: 1 hour)' },
  { key: 'simJournalEntries', flag: '--sim-journal-entries <n>', env: 'JOBSCOPE_SIM_JOURNAL_ENTRIES', kind: 'int', default: 5000, help: 'HTTP exchanges the runner simulator\'s journal keeps (oldest dropped first)', min: 1, max: 100_000 },
  { key: 'simJournalBodyBytes', flag: '--sim-journal-body-bytes <n>', env: 'JOBSCOPE_SIM_JOURNAL_BODY_BYTES', kind: 'int', default: 8192, help: 'bytes of each request and response body the simulator\'s journal keeps', max: 1_048_576 },
  { key: 'redisUrl', flag: '--redis <url>', env: 'JOBSCOPE_REDIS_URL', kind: 'string', default: undefined, help: 'run the job system on this Redis (redis://[:password@]host:port/db) in Sidekiq 6 layout, shared with Sidekiq and other Jobscope servers; default: SQLite in the data dir' },
  { key: 'redisProcessTtlS', flag: '--redis-process-ttl-s <s>', env: 'JOBSCOPE_REDIS_PROCESS_TTL_S', kind: 'int', default: 60, help: 'with --redis: TTL of this process\'s heartbeat hash (Sidekiq: 60 s, beat every 5 s or TTL/3); a process silent this long is dead and its jobs in flight run again elsewhere', min: 3, max: 86_400 },
  // A shorter beat shows busy slots and running jobs (Sidekiq's Busy page) sooner, for the price of a
  // Redis write each time; tests use it to see a change in milliseconds instead of up to 5 s.
  { key: 'redisBeatMs', flag: '--redis-beat-ms <ms>', env: 'JOBSCOPE_REDIS_BEAT_MS', kind: 'int', default: 0, help: 'with --redis: how often this process writes its heartbeat (busy slots, jobs running, seen by Sidekiq\'s Busy page), in ms; 0 = as Sidekiq: every 5 s, or --redis-process-ttl-s/3 if shorter; never longer than that', max: 3_600_000 },
  { key: 'jobQueues', flag: '--queues <queue...>', env: 'JOBSCOPE_QUEUES', kind: 'string', default: undefined, help: 'with --redis: serve only these queues, as Sidekiq\'s -q name[,weight] (repeat the flag, or list them: "critical,3 default,1"); with weights, each fetch tries them in a weighted random order, without, in the order given; default: every queue Jobscope created and its own' },
  // Where the data lives, as --data-dir: given at each start, never saved from the UI (see SAVABLE).
  { key: 'database', flag: '--database <url>', env: 'JOBSCOPE_DATABASE_URL', kind: 'string', default: undefined, help: 'keep builds, runners, projects and users in this PostgreSQL database (postgres://user:password@host:5432/database), shared by every Jobscope instance given the same URL and data dir; the schema is created or migrated at start; default: SQLite in the data dir' },
  { key: 'databaseConnectTimeoutMs', flag: '--database-connect-timeout-ms <ms>', env: 'JOBSCOPE_DATABASE_CONNECT_TIMEOUT_MS', kind: 'int', default: 10000, help: 'with --database: how long a request waits for a database connection (all busy, or the database not answering a connect) before it is answered 503 with Retry-After, in ms', min: 100, max: 600_000 },
  { key: 'databaseStatementTimeoutMs', flag: '--database-statement-timeout-ms <ms>', env: 'JOBSCOPE_DATABASE_STATEMENT_TIMEOUT_MS', kind: 'int', default: 30000, help: 'with --database: PostgreSQL cancels a statement running longer (statement_timeout) and the request is answered 503 with Retry-After, in ms; 0 = no limit', max: 3_600_000 },
  { key: 'allowedHosts', flag: '--allowed-hosts <hosts>', env: 'JOBSCOPE_ALLOWED_HOSTS', kind: 'string', default: undefined, help: 'comma-separated Host names (with :port to allow only that port) served besides localhost, 127.x.x.x, [::1] and the bound address; bound to 0.0.0.0 any Host is served unless this is given' },
  { key: 'outboundAllow', flag: '--outbound-allow <hosts>', env: 'JOBSCOPE_OUTBOUND_ALLOW', kind: 'string', default: undefined, help: 'comma-separated hosts, addresses and networks (10.0.0.0/8) the console, fleets and connections may call besides the default, or * for all; default: all when bound to loopback, otherwise not loopback, link-local, cloud-metadata or this machine\'s own addresses' },
  { key: 'maxWatchedConnections', flag: '--max-watched-connections <n>', env: 'JOBSCOPE_MAX_WATCHED_CONNECTIONS', kind: 'int', default: 50, help: 'most remote connections (GitLab and sidekiq) watched at once; adding one more gets 409', min: 1, max: 10_000 },
  { key: 'minConnectionIntervalS', flag: '--min-connection-interval-s <s>', env: 'JOBSCOPE_MIN_CONNECTION_INTERVAL_S', kind: 'int', default: 2, help: 'shortest sampling interval a connection may have, in s; a shorter interval_s gets 400', min: 2, max: 60 },
  { key: 'headersTimeoutMs', flag: '--headers-timeout-ms <ms>', env: 'JOBSCOPE_HEADERS_TIMEOUT_MS', kind: 'int', default: 20000, help: 'a request\'s line and headers must arrive within this, in ms', min: 100, max: 600_000 },
  { key: 'bodyTimeoutMs', flag: '--body-timeout-ms <ms>', env: 'JOBSCOPE_BODY_TIMEOUT_MS', kind: 'int', default: 30000, help: 'window of the body rule: a request body still arriving must send --body-min-bytes-per-s over every window of this length, or it gets 408 and its connection is closed, in ms', min: 100, max: 86_400_000 },
  { key: 'bodyMinBytesPerS', flag: '--body-min-bytes-per-s <n>', env: 'JOBSCOPE_BODY_MIN_BYTES_PER_S', kind: 'int', default: 4096, help: 'average rate a request body must keep over every --body-timeout-ms window (a 100 MiB upload may take ~7 h at the default); 0 = every body must be whole within --body-timeout-ms' },
  { key: 'idleTimeoutMs', flag: '--idle-timeout-ms <ms>', env: 'JOBSCOPE_IDLE_TIMEOUT_MS', kind: 'int', default: 60000, help: 'a connection with a request open and nothing read or written for this long is closed, in ms', min: 100, max: 86_400_000 },
  { key: 'lingeringCloseMs', flag: '--lingering-close-ms <ms>', env: 'JOBSCOPE_LINGERING_CLOSE_MS', kind: 'int', default: 5000, help: 'after an early answer to a body still arriving (413, 507), the connection keeps reading and dropping it for up to this long so the client reads the answer instead of a reset, in ms; 0 = close at once', max: 600_000 },
  { key: 'keepAliveTimeoutMs', flag: '--keep-alive-timeout-ms <ms>', env: 'JOBSCOPE_KEEP_ALIVE_TIMEOUT_MS', kind: 'int', default: 10000, help: 'an idle keep-alive connection is closed after this (runners poll every 3 s), in ms', min: 100, max: 600_000 },
  { key: 'maxConnections', flag: '--max-connections <n>', env: 'JOBSCOPE_MAX_CONNECTIONS', kind: 'int', default: 0, help: 'open connections at most, all clients together; more are closed at accept (open ones keep being served); 0 = the open-file limit less a tenth of it (at least 256) for the server\'s own files', max: 10_000_000 },
  { key: 'maxConnectionsPerAddress', flag: '--max-connections-per-address <n>', env: 'JOBSCOPE_MAX_CONNECTIONS_PER_ADDRESS', kind: 'int', default: 0, help: 'open connections at most from one client address; more get 503 with Retry-After and are closed at accept; 0 = a quarter of --max-connections', max: 10_000_000 },
  { key: 'maxRunnerBodyKib', flag: '--max-runner-body-kib <kib>', env: 'JOBSCOPE_MAX_RUNNER_BODY_KIB', kind: 'int', default: 64, help: 'largest runner request body read before its token is checked (register, poll, delete, updates of builds that are not running), in KiB', min: 1, max: 65536 },
  { key: 'maxInflightBodyBytes', flag: '--max-inflight-body-mb <mb>', env: 'JOBSCOPE_MAX_INFLIGHT_BODY_MB', kind: 'mb', default: 256, help: 'request bodies held in memory at once across all requests (artifact uploads stream to disk and do not count); past it requests get 503 with Retry-After, in MiB', min: 1 },
  { key: 'artifactListingMaxEntries', flag: '--artifact-listing-max-entries <n>', env: 'JOBSCOPE_ARTIFACT_LISTING_MAX_ENTRIES', kind: 'int', default: 10000, help: 'entries of an artifacts archive\'s file list kept for the build page (all are counted; the list is marked truncated)' },
  { key: 'artifactListingMaxNameBytes', flag: '--artifact-listing-max-name-bytes <n>', env: 'JOBSCOPE_ARTIFACT_LISTING_MAX_NAME_BYTES', kind: 'int', default: 1048576, help: 'bytes of entry names an archive\'s file list keeps in total' },
  { key: 'maxQueues', flag: '--max-queues <n>', env: 'JOBSCOPE_MAX_QUEUES', kind: 'int', default: 1000, help: 'most job queues; POST /api/v3/sim/jobs into a new queue past it gets 409' },
  { key: 'queueForgetIdleMinutes', flag: '--queue-forget-idle-minutes <min>', env: 'JOBSCOPE_QUEUE_FORGET_IDLE_MINUTES', kind: 'int', default: 60, help: 'an empty queue of synthetic jobs idle this long is forgotten, in minutes; 0 = never' },
  { key: 'historyMaxQueues', flag: '--history-max-queues <n>', env: 'JOBSCOPE_HISTORY_MAX_QUEUES', kind: 'int', default: 200, help: 'most queues each dashboard history sample records; queues seen after the limit is reached are not sampled' },
  { key: 'walCheckpointEveryMs', flag: '--wal-checkpoint-every-ms <ms>', env: 'JOBSCOPE_WAL_CHECKPOINT_EVERY_MS', kind: 'int', default: 60000, help: 'how often the database\'s write-ahead log (jobscope.db-wal) is copied into jobscope.db and truncated, in ms; 0 = only SQLite\'s automatic checkpoint (every ~4 MiB of WAL)', max: 86_400_000 },
  { key: 'maxUiStateKib', flag: '--max-ui-state-kib <kib>', env: 'JOBSCOPE_MAX_UI_STATE_KIB', kind: 'int', default: 64, help: 'largest UI state (view range, filters, selected connection) the UI may save in the data dir, in KiB; a larger PUT /api/app/ui-state gets 413', min: 1, max: 1024 },
];

export class ConfigError extends Error {}

/** Smallest connection cap accepted from settings.json (a flag may go lower, for tests). */
const MIN_SAVED_CONNECTIONS = 64;

/** Shortest admin or registration token accepted from a flag or the environment. */
export const MIN_TOKEN_LENGTH = 16;

const flagName = (spec: SettingSpec) => spec.flag.split(' ')[0]!;

/** A value from a flag, the environment or settings.json, parsed and checked against its row; ConfigError names the flag and what it takes. */
export function parseValue(spec: SettingSpec, raw: unknown): Config[keyof Config] {
  if (spec.kind === 'bool') {
    if (typeof raw === 'boolean') return raw;
    const s = String(raw).toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(s)) return true;
    if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
    throw new ConfigError(`${spec.env}: expected true or false, got "${raw}"`);
  }
  const bounds = boundsOf(spec);
  if (bounds) {
    const n = typeof raw === 'number' ? raw : String(raw).trim() === '' ? NaN : Number(String(raw).trim());
    if (!Number.isFinite(n) || n < bounds.min || n > bounds.max || (spec.kind === 'int' && !Number.isInteger(n))) {
      const what = spec.kind === 'int' ? 'a whole number' : 'a number of MiB';
      throw new ConfigError(`${flagName(spec)}: expected ${what} from ${bounds.min.toLocaleString('en-US')} to ${bounds.max.toLocaleString('en-US')}, got "${raw}"`);
    }
    return spec.kind === 'mb' ? Math.floor(n * 1024 * 1024) : n;
  }
  if (spec.key === 'outboundAllow') {
    const problem = outboundAllowProblem(String(raw));
    if (problem) throw new ConfigError(`${flagName(spec)} (${spec.env}): ${problem}`);
  }
  if (spec.key === 'jobQueues') {
    const order = parseQueueOrder(String(raw));
    if ('error' in order) throw new ConfigError(`${flagName(spec)} (${spec.env}): ${order.error}`);
  }
  if (spec.key === 'database') {
    const problem = databaseUrlProblem(String(raw));
    if (problem) throw new ConfigError(`${flagName(spec)} (${spec.env}): ${problem}`);
  }
  if (spec.choices && !spec.choices.includes(String(raw))) {
    throw new ConfigError(`${flagName(spec)}: expected one of ${spec.choices.join(', ')}, got "${raw}"`);
  }
  return String(raw);
}

/**
 * Why a value saved in settings.json must not be used, or null. Beyond what a flag accepts, a saved
 * host must be bindable here: a flag's typo fails in front of the person who typed it, a saved
 * one would fail a later start (the desktop app's, say) with nobody to read why.
 */
export function savedValueProblem(spec: SettingSpec, raw: unknown): string | null {
  if (raw !== null && typeof raw === 'object') return `${flagName(spec)}: expected a ${spec.kind === 'string' ? 'string' : spec.kind === 'bool' ? 'boolean' : 'number'}, got ${JSON.stringify(raw)}`;
  try {
    const v = parseValue(spec, raw);
    if (spec.key === 'host') return unbindableHostProblem(String(v));
    // A browser alone opens several connections: a saved cap of a few would shut the UI out at the next start.
    if ((spec.key === 'maxConnections' || spec.key === 'maxConnectionsPerAddress') && v !== 0 && Number(v) < MIN_SAVED_CONNECTIONS) {
      return `${flagName(spec)}: a saved cap below ${MIN_SAVED_CONNECTIONS} would leave the UI too few connections at the next start; save 0 (derived from the open-file limit) or at least ${MIN_SAVED_CONNECTIONS}`;
    }
    return null;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}

/** `--max-artifact-mb <mb>` → `max-artifact-mb`: how a setting is named in settings.json. */
export const settingName = (spec: SettingSpec) => flagName(spec).slice(2);

/**
 * Settings that the UI may save: not where the data lives (the data dir, the database), nor the
 * secrets kept inside it. A database URL holds its password, and settings.json sits in the data dir
 * the database is shared beside: each instance is told its database at start, as its data dir.
 */
export const SAVABLE = SETTINGS.filter((s) => !['dataDir', 'database', 'adminToken', 'registrationToken', 'uiDir'].includes(s.key));

export const SETTINGS_FILE = 'settings.json';

/** The settings saved from the UI in <data dir>/settings.json, by setting name; {} when none or unreadable. */
export function readSavedSettings(dataDir: string): Record<string, unknown> {
  return loadSavedSettings(dataDir).values;
}

/** settings.json and, when it exists but cannot be used, why (reported at start, never fatal). */
export function loadSavedSettings(dataDir: string): { values: Record<string, unknown>; problem: string | null } {
  const file = path.join(dataDir, SETTINGS_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { values: {}, problem: (err as NodeJS.ErrnoException).code === 'ENOENT' ? null : `${file}: ignored, unreadable (${(err as Error).message})` };
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return { values: parsed as Record<string, unknown>, problem: null };
    return { values: {}, problem: `${file}: ignored, not a JSON object` };
  } catch (err) {
    return { values: {}, problem: `${file}: ignored, not valid JSON (${(err as Error).message})` };
  }
}

/**
 * Precedence: explicit options (flags or a caller's overrides) > JOBSCOPE_* environment >
 * settings saved from the UI (<data dir>/settings.json) > default.
 * `options` uses Config keys; values may be raw strings from the command line.
 */
export function resolveConfig(options: Partial<Record<keyof Config, unknown>> = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const out: Record<string, unknown> = {};
  const fromFlagsOrEnv = (spec: SettingSpec): unknown => {
    const raw = options[spec.key];
    if (raw !== undefined) return raw;
    return env[spec.env] !== undefined && env[spec.env] !== '' ? env[spec.env] : undefined;
  };
  const dataDirSpec = SETTINGS.find((s) => s.key === 'dataDir')!;
  const { values: saved, problem } = loadSavedSettings(path.resolve(String(fromFlagsOrEnv(dataDirSpec) ?? dataDirSpec.default)));
  const warnings: string[] = problem ? [problem] : [];
  for (const spec of SETTINGS) {
    let raw = fromFlagsOrEnv(spec);
    const savedValue = SAVABLE.includes(spec) ? saved[settingName(spec)] : undefined;
    if (raw === undefined && savedValue !== undefined && savedValue !== null) {
      // A bad saved value falls back to the default: the server must start so the value can be fixed.
      const bad = savedValueProblem(spec, savedValue);
      if (bad) warnings.push(`settings.json: ignored ${settingName(spec)} = ${JSON.stringify(savedValue)} (${bad}); using the default ${JSON.stringify(spec.default ?? null)}`);
      else raw = savedValue;
      if (!bad && spec.key === 'host' && !isLoopbackHost(String(savedValue))) {
        warnings.push(`settings.json: host = ${JSON.stringify(savedValue)} makes this server reachable from other machines; remove it from settings.json to listen on 127.0.0.1 only`);
      }
    }
    if (raw === undefined) {
      out[spec.key] = spec.default === undefined ? undefined : parseValue(spec, spec.default);
      continue;
    }
    out[spec.key] = parseValue(spec, raw);
  }
  const config = out as unknown as Config;
  config.dataDir = path.resolve(config.dataDir);
  if (config.uiDir) config.uiDir = path.resolve(config.uiDir);
  for (const key of ['adminToken', 'registrationToken'] as const) {
    const token = config[key];
    // A short token given by hand can be guessed (a rebinding page only needs the registration token).
    if (token !== undefined && token.length < MIN_TOKEN_LENGTH) {
      const spec = SETTINGS.find((s) => s.key === key)!;
      throw new ConfigError(`${flagName(spec)} (${spec.env}): a token must have at least ${MIN_TOKEN_LENGTH} characters, got ${token.length}; leave it out to have one generated`);
    }
  }
  if (warnings.length) config.settingsWarnings = warnings;
  return config;
}
