// Schema, one entry per version; never edit a shipped entry, append a new one.
// Times are epoch milliseconds. Tokens are stored with a SHA-256 digest that lookups use, so
// finding a token never compares the secret itself byte by byte (no timing oracle).
export const MIGRATIONS: string[] = [
  `
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

  CREATE TABLE runners (
    id INTEGER PRIMARY KEY,
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
  CREATE INDEX builds_pending ON builds (status, id);
  CREATE INDEX builds_project ON builds (project_id, id);
  CREATE INDEX builds_runner ON builds (runner_id, status);
  `,
  // 2: the dashboard's monitor: watched connections (remote tokens stay here, never in answers),
  // sampled history (tier 0 = every sample, tier 1 = 1-minute rollups; compact binary rows),
  // the queue-name dictionary those rows index into, and alerts.
  `
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
  CREATE INDEX monitor_alerts_at ON monitor_alerts (at);
  `,
  // 3: the embedded job system. A job row stays `queued` until it finishes, so a job in flight
  // when the process dies is simply queued again at the next start (at-least-once, as Sidekiq's
  // reliable fetch). `retry` rows wait for run_at; `dead` rows are the dead set.
  `
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
  CREATE INDEX jobs_state ON jobs (state, enqueued_at, id);
  CREATE TABLE job_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
  `,
  // 4: dispatch looks up each project's oldest pending build and counts its running builds by index.
  `
  CREATE INDEX builds_project_status ON builds (project_id, status, id);
  DROP INDEX builds_project;
  `,
  // 5: archive listings leave the builds row, where every list query read them whole (older
  // versions kept every name: hundreds of MB in a few rows). The old column is emptied here without
  // reading it into JavaScript; the listings are derived data and are listed again from the archives.
  `
  CREATE TABLE artifact_listings (
    build_id INTEGER PRIMARY KEY REFERENCES builds(id) ON DELETE CASCADE,
    artifacts_key TEXT NOT NULL,
    total INTEGER NOT NULL,
    truncated INTEGER NOT NULL,
    entries TEXT NOT NULL
  );
  CREATE TRIGGER artifact_listings_follow_archive AFTER UPDATE OF artifacts_key ON builds
  WHEN NEW.artifacts_key IS NOT OLD.artifacts_key
  BEGIN
    DELETE FROM artifact_listings WHERE build_id = NEW.id;
  END;
  UPDATE builds SET artifacts_listing = NULL WHERE artifacts_listing IS NOT NULL;
  `,
  // 6: a runner id is never given out twice. Without AUTOINCREMENT SQLite reuses the highest id after
  // its runner is deleted, and the next runner registered inherited the deleted one's running builds
  // (its PUT to them answered 200 where GitLab answers 404). The sequence starts past every id a build
  // still names, so ids freed before this migration are not handed out again either.
  `
  CREATE TABLE runners_v6 (
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
  INSERT INTO runners_v6 (id, token, token_sha, description, is_shared, project_id, active, run_untagged, locked, tag_list, info, online, contacted_at, created_at)
    SELECT id, token, token_sha, description, is_shared, project_id, active, run_untagged, locked, tag_list, info, online, contacted_at, created_at FROM runners;
  DROP TABLE runners;
  ALTER TABLE runners_v6 RENAME TO runners;
  DELETE FROM sqlite_sequence WHERE name IN ('runners', 'runners_v6');
  INSERT INTO sqlite_sequence (name, seq)
    VALUES ('runners', MAX(COALESCE((SELECT MAX(id) FROM runners), 0), COALESCE((SELECT MAX(runner_id) FROM builds), 0)));
  `,
  // 7: alerts resolve. An alert fires when a sample crosses a threshold and resolves at the first
  // sample back under it (or without its queue or rule); a user's acknowledgement is kept with it.
  // Alerts from before had no end: they are taken as resolved, and one still over its threshold
  // fires again at the next sample.
  `
  ALTER TABLE monitor_alerts ADD COLUMN resolved_at INTEGER;
  ALTER TABLE monitor_alerts ADD COLUMN acknowledged_at INTEGER;
  UPDATE monitor_alerts SET resolved_at = at;
  CREATE INDEX monitor_alerts_open ON monitor_alerts (connection_id, resolved_at);
  `,
  // 8: a sidekiq connection is read-only unless the user allows changes on it (retry, delete, kill,
  // quiet a process): nothing writes to a watched production Redis by default.
  `
  ALTER TABLE monitor_connections ADD COLUMN allow_changes INTEGER NOT NULL DEFAULT 0;
  `,
];
