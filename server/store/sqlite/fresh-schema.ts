// The schema that MIGRATIONS (migrations.ts) leave, as one batch: a fresh data dir runs this in one
// transaction instead of replaying every migration (each its own transaction and commit, migration
// 6 copying the runners table): ~55 -> ~20 ms of CPU on a server's first start, SQLite's WebAssembly
// compiling the parser's paths either way. Every statement is the text SQLite keeps in sqlite_master
// after the replay, byte for byte ("runners" quoted by migration 6's RENAME), and the sequence row
// migration 6 leaves; test/store/fresh-schema.test.ts compares the two databases.
// When a migration is appended, this stays as it is: a fresh store runs it, then the migrations
// after FRESH_SCHEMA_VERSION. Bring it up to date (and the version) when convenient; the test says if
// the text differs.

/** The last migration whose result FRESH_SCHEMA is. */
export const FRESH_SCHEMA_VERSION = 6;

export const FRESH_SCHEMA = `
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    admin INTEGER NOT NULL DEFAULT 0,
    private_token TEXT NOT NULL,
    token_sha TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
  );
CREATE TABLE projects (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    runners_token TEXT NOT NULL,
    runners_token_sha TEXT NOT NULL UNIQUE,
    ci_token TEXT NOT NULL,
    ci_token_sha TEXT NOT NULL UNIQUE,
    shared_runners_enabled INTEGER NOT NULL DEFAULT 1,
    build_timeout INTEGER NOT NULL DEFAULT 3600,
    created_at INTEGER NOT NULL
  );
CREATE TABLE builds (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    runner_id INTEGER,
    status TEXT NOT NULL,
    name TEXT NOT NULL,
    stage TEXT NOT NULL,
    ref TEXT NOT NULL,
    sha TEXT NOT NULL,
    before_sha TEXT NOT NULL,
    tag INTEGER NOT NULL DEFAULT 0,
    commands TEXT NOT NULL,
    repo_url TEXT,
    variables TEXT NOT NULL DEFAULT '[]',
    options TEXT NOT NULL DEFAULT '{}',
    timeout INTEGER,
    tag_list TEXT NOT NULL DEFAULT '[]',
    depends_on TEXT NOT NULL DEFAULT '[]',
    token TEXT NOT NULL,
    token_sha TEXT NOT NULL UNIQUE,
    artifacts_key TEXT,
    artifacts_filename TEXT,
    artifacts_size INTEGER,
    artifacts_expire_at INTEGER,
    artifacts_listing TEXT,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER
  );
CREATE TABLE monitor_connections (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    base_url TEXT,
    private_token TEXT,
    api_version TEXT NOT NULL DEFAULT 'v4',
    segment TEXT NOT NULL DEFAULT 'sidekiq',
    interval_s INTEGER NOT NULL DEFAULT 5,
    enabled INTEGER NOT NULL DEFAULT 1,
    thresholds TEXT NOT NULL DEFAULT '{"queues":{}}',
    last_sample_at INTEGER,
    last_error TEXT,
    last_sample TEXT,
    created_at INTEGER NOT NULL
  );
CREATE TABLE monitor_queue_names (
    connection_id TEXT NOT NULL REFERENCES monitor_connections(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (connection_id, idx)
  ) WITHOUT ROWID;
CREATE TABLE monitor_samples (
    connection_id TEXT NOT NULL REFERENCES monitor_connections(id) ON DELETE CASCADE,
    tier INTEGER NOT NULL,
    t INTEGER NOT NULL,
    error TEXT,
    data BLOB,
    PRIMARY KEY (connection_id, tier, t)
  ) WITHOUT ROWID;
CREATE TABLE monitor_alerts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    connection_id TEXT NOT NULL REFERENCES monitor_connections(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    queue TEXT,
    value REAL NOT NULL,
    threshold REAL NOT NULL,
    at INTEGER NOT NULL
  );
CREATE TABLE job_queues (name TEXT PRIMARY KEY, created_at INTEGER NOT NULL);
CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    queue TEXT NOT NULL,
    class TEXT NOT NULL,
    kind TEXT NOT NULL,
    args TEXT NOT NULL,
    state TEXT NOT NULL,
    retry INTEGER NOT NULL,
    retry_count INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    enqueued_at INTEGER NOT NULL,
    run_at INTEGER,
    failed_at INTEGER,
    error TEXT
  );
CREATE TABLE job_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE artifact_listings (
    build_id INTEGER PRIMARY KEY REFERENCES builds(id) ON DELETE CASCADE,
    artifacts_key TEXT NOT NULL,
    total INTEGER NOT NULL,
    truncated INTEGER NOT NULL,
    entries TEXT NOT NULL
  );
CREATE TABLE "runners" (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token TEXT NOT NULL,
    token_sha TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    is_shared INTEGER NOT NULL,
    project_id INTEGER REFERENCES projects(id) ON DELETE CASCADE,
    active INTEGER NOT NULL DEFAULT 1,
    run_untagged INTEGER NOT NULL DEFAULT 1,
    locked INTEGER NOT NULL DEFAULT 0,
    tag_list TEXT NOT NULL DEFAULT '[]',
    info TEXT NOT NULL DEFAULT '{}',
    online INTEGER NOT NULL DEFAULT 1,
    contacted_at INTEGER,
    created_at INTEGER NOT NULL
  );
CREATE INDEX builds_pending ON builds (status, id);
CREATE INDEX builds_runner ON builds (runner_id, status);
CREATE INDEX monitor_alerts_at ON monitor_alerts (at);
CREATE INDEX jobs_state ON jobs (state, enqueued_at, id);
CREATE INDEX builds_project_status ON builds (project_id, status, id);
CREATE TRIGGER artifact_listings_follow_archive AFTER UPDATE OF artifacts_key ON builds
  WHEN NEW.artifacts_key IS NOT OLD.artifacts_key
  BEGIN
    DELETE FROM artifact_listings WHERE build_id = NEW.id;
  END;
INSERT INTO sqlite_sequence (name, seq) VALUES ('runners', 0);
`;
