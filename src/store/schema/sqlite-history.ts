// SQLite's migrations 1–6, shipped before the PostgreSQL store existed: frozen, as databases are at
// those versions. From version 7 on, SQLite runs the shared list (shared-migrations.ts).

/** SQLite's schema versions 1–6 (`PRAGMA user_version`), as they shipped; never edit one. */
export const SQLITE_HISTORY: readonly string[] = [
  // 1: commands, runs, steps and sessions, as the first release wrote them (IF NOT EXISTS: those
  // databases predate user_version).
  `
  CREATE TABLE IF NOT EXISTS commands (
    id INTEGER PRIMARY KEY,
    delivery_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    outcome TEXT,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    installation_id INTEGER NOT NULL,
    owner TEXT NOT NULL,
    repo TEXT NOT NULL,
    issue_number INTEGER NOT NULL,
    issue_title TEXT NOT NULL,
    issue_body TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    config TEXT NOT NULL,
    plan TEXT,
    state TEXT NOT NULL,
    comment_id INTEGER,
    restarts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER
  );
  CREATE UNIQUE INDEX IF NOT EXISTS one_active_run_per_issue
    ON runs (owner, repo, issue_number) WHERE state IN ('queued', 'running');
  CREATE TABLE IF NOT EXISTS steps (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id),
    position INTEGER NOT NULL,
    owner TEXT NOT NULL,
    repo TEXT NOT NULL,
    base_branch TEXT,
    branch TEXT NOT NULL,
    scope TEXT,
    iteration_base INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL,
    phase TEXT NOT NULL,
    worktree TEXT,
    native_worktree TEXT,
    start_sha TEXT,
    manifest TEXT,
    summary TEXT,
    gates TEXT,
    changed_files TEXT,
    pr_number INTEGER,
    pr_url TEXT,
    error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (run_id, position)
  );
  CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    step_id INTEGER NOT NULL REFERENCES steps (id),
    iteration INTEGER NOT NULL,
    purpose TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT,
    state TEXT NOT NULL,
    cost_usd REAL NOT NULL DEFAULT 0,
    turns INTEGER,
    pid INTEGER,
    failure_kind TEXT,
    message TEXT,
    started_at INTEGER NOT NULL,
    finished_at INTEGER
  );
  `,
  // 2: passes, guidance and the event log (review gates). Existing runs become pass 1; a run that
  // waited for review keeps waiting, now as an open state.
  `
  CREATE TABLE passes (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id),
    number INTEGER NOT NULL,
    trigger TEXT NOT NULL,
    requested_by TEXT NOT NULL,
    state TEXT NOT NULL,
    plan TEXT,
    recommendation TEXT,
    refinements TEXT,
    open_questions TEXT,
    decision TEXT,
    decided_by TEXT,
    decided_via TEXT,
    decided_at INTEGER,
    config TEXT NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    UNIQUE (run_id, number)
  );
  CREATE TABLE step_passes (
    id INTEGER PRIMARY KEY,
    step_id INTEGER NOT NULL REFERENCES steps (id),
    pass_id INTEGER NOT NULL REFERENCES passes (id),
    state TEXT NOT NULL,
    scope TEXT,
    start_sha TEXT,
    end_sha TEXT,
    human_shas TEXT,
    commits INTEGER NOT NULL DEFAULT 0,
    gates TEXT,
    summary TEXT,
    manifest TEXT,
    changed_files TEXT,
    block_reason TEXT,
    wip_sha TEXT,
    package_comment_id INTEGER,
    UNIQUE (step_id, pass_id)
  );
  CREATE TABLE guidance (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id),
    pass_id INTEGER REFERENCES passes (id),
    delivery_id TEXT NOT NULL,
    source TEXT NOT NULL,
    owner TEXT,
    repo TEXT,
    pr_number INTEGER,
    author TEXT NOT NULL,
    url TEXT,
    github_id INTEGER,
    path TEXT,
    line INTEGER,
    diff_hunk TEXT,
    outdated INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL,
    status TEXT,
    status_note TEXT,
    replied INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    UNIQUE (delivery_id, github_id)
  );
  CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id),
    pass INTEGER,
    kind TEXT NOT NULL,
    from_state TEXT,
    to_state TEXT,
    actor TEXT,
    detail TEXT,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX events_by_run ON events (run_id, id);
  ALTER TABLE runs ADD COLUMN current_pass INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE runs ADD COLUMN report_comment_id INTEGER;
  ALTER TABLE steps ADD COLUMN pass INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE steps ADD COLUMN pr_state TEXT;
  ALTER TABLE steps ADD COLUMN head_sha TEXT;
  ALTER TABLE steps ADD COLUMN draft INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE steps ADD COLUMN gate TEXT;
  ALTER TABLE sessions ADD COLUMN pass INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE commands ADD COLUMN event_key TEXT;
  CREATE UNIQUE INDEX commands_by_event ON commands (event_key) WHERE event_key IS NOT NULL;
  CREATE INDEX steps_by_pr ON steps (owner, repo, pr_number);
  UPDATE steps SET pr_state = 'open' WHERE pr_number IS NOT NULL;
  -- A run stopped before its planning step delivered resumes by planning, not by building no steps.
  INSERT INTO passes (run_id, number, trigger, requested_by, state, plan, config, started_at, finished_at)
    SELECT id, 1, 'initial', requested_by,
      CASE
        WHEN state = 'review' THEN 'at_gate'
        WHEN state = 'queued' THEN 'queued'
        WHEN EXISTS (SELECT 1 FROM steps s WHERE s.run_id = runs.id AND s.position = 0 AND s.state <> 'delivered')
          THEN 'planning'
        ELSE 'building'
      END,
      plan, config, created_at, NULL FROM runs;
  INSERT INTO step_passes (step_id, pass_id, state, scope, start_sha, gates, summary, manifest, changed_files)
    SELECT s.id, p.id, s.state, s.scope, s.start_sha, s.gates, s.summary, s.manifest, s.changed_files
    FROM steps s JOIN passes p ON p.run_id = s.run_id AND p.number = 1 WHERE s.position > 0;
  -- One open run per issue: a label on an issue whose run waits for review must not start another.
  -- Older duplicates of an issue end as closed first, or the index could not be built.
  UPDATE runs SET state = 'closed' WHERE state NOT IN ('queued', 'running') AND EXISTS (
    SELECT 1 FROM runs newer WHERE newer.owner = runs.owner AND newer.repo = runs.repo
      AND newer.issue_number = runs.issue_number AND newer.id > runs.id);
  UPDATE runs SET finished_at = NULL WHERE state = 'review';
  DROP INDEX one_active_run_per_issue;
  CREATE UNIQUE INDEX one_open_run_per_issue
    ON runs (owner, repo, issue_number) WHERE state NOT IN ('merged', 'closed');
  `,
  // 3: when a command was answered, so a repeat that arrived before the answer joins it (coalesce.ts).
  `
  ALTER TABLE commands ADD COLUMN finished_at INTEGER;
  `,
  // 4: who a session's process is beyond its pid (boot and start time), so recovery after a
  // restart kills a leftover agent and never an unrelated process that got the same pid.
  `
  ALTER TABLE sessions ADD COLUMN pid_identity TEXT;
  `,
  // 5: a command GitHub failed is tried again later, a few times (worker.ts), not dropped.
  `
  ALTER TABLE commands ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE commands ADD COLUMN not_before INTEGER;
  `,
  // 6: which worker process runs a run (lisa status); PostgreSQL's first migration matches this one.
  `
  ALTER TABLE runs ADD COLUMN worker TEXT;
  `,
];
