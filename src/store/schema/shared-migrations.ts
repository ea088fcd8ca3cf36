// Every migration since the two dialects converged (SQLite's 6, PostgreSQL's 1), written once for
// both. To change the schema, append one entry to SHARED_MIGRATIONS: the only source edit it takes;
// each dialect runs it at its next version (versions.ts numbers it).

import type { DialectWords } from "./dialect.ts";

/** A migration in portable SQL: the words the dialects spell differently come from `words`, as `${int}`. */
export type SharedMigration = (words: DialectWords) => string;

/**
 * The shared migrations in order. Append; never edit one that has shipped
 * (test/store/shared-migrations.test.ts keeps the text each dialect shipped).
 */
export const SHARED_MIGRATIONS: readonly SharedMigration[] = [
  // 1 (SQLite 7, PostgreSQL 2): a tracking comment edit GitHub refused is owed until written, across restarts.
  ({ int }) => `
  ALTER TABLE runs ADD COLUMN tracking_owed ${int} NOT NULL DEFAULT 0;
  `,
  // 2 (SQLite 8, PostgreSQL 3): a MAC on every command row, checked before it runs. Rows already
  // here get none: signing them now would bless any an intruder had inserted, so pending ones are refused.
  () => `
  ALTER TABLE commands ADD COLUMN mac TEXT;
  `,
  // 3 (SQLite 9, PostgreSQL 4): the last state change whose GitHub side (labels, report, merge,
  // checks, tracking) is written; the runs behind it are brought up to date. Runs here now count as written.
  ({ int }) => `
  ALTER TABLE runs ADD COLUMN published_event ${int};
  UPDATE runs SET published_event = (SELECT MAX(id) FROM events WHERE events.run_id = runs.id AND to_state IS NOT NULL);
  `,
  // 4 (SQLite 10, PostgreSQL 5): the write slots each installation has reserved, so every process
  // paces its GitHub writes against the same limits (write-slots.ts).
  ({ id, int }) => `
  CREATE TABLE write_slots (
    id ${id},
    installation_id ${int} NOT NULL,
    at ${int} NOT NULL,
    creates ${int} NOT NULL
  );
  CREATE INDEX write_slots_by_installation ON write_slots (installation_id, at);
  CREATE INDEX write_slots_by_time ON write_slots (at);
  `,
  // 5 (SQLite 11, PostgreSQL 6): the config files workers last read, so the next read is conditional
  // and the web process can drop labels that are no repository's Lisa label (config-cache.ts).
  ({ id, int }) => `
  CREATE TABLE repo_configs (
    id ${id},
    installation_id ${int} NOT NULL,
    owner TEXT NOT NULL,
    repo TEXT NOT NULL,
    path TEXT NOT NULL,
    etag TEXT,
    content TEXT,
    label TEXT,
    validated_at ${int} NOT NULL,
    UNIQUE (installation_id, owner, repo, path)
  );
  `,
  // 6 (SQLite 12, PostgreSQL 7): what Lisa learns within a run (docs/operations.md, What Lisa learns): the agent's reflection on
  // each gate failure it was sent back for, and the anchors (gates and tests) a delivered pass set.
  ({ id, int }) => `
  CREATE TABLE reflections (
    id ${id},
    step_id ${int} NOT NULL,
    pass ${int} NOT NULL,
    iteration ${int} NOT NULL,
    gate TEXT NOT NULL,
    signature TEXT NOT NULL,
    what_failed TEXT NOT NULL,
    cause TEXT NOT NULL,
    change TEXT NOT NULL,
    created_at ${int} NOT NULL
  );
  CREATE INDEX reflections_by_step ON reflections (step_id, pass);
  CREATE TABLE anchors (
    id ${id},
    step_id ${int} NOT NULL,
    pass ${int} NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    UNIQUE (step_id, kind, value)
  );
  `,
  // 7 (SQLite 13, PostgreSQL 8): the pull request's CI failure a step was sent back to fix, kept
  // until a fix session has answered it, so a restart or a steered session does not lose it (ci-failure.ts).
  () => `
  ALTER TABLE steps ADD COLUMN ci_failure TEXT;
  `,
  // 8 (SQLite 14, PostgreSQL 9): the pull request of its own through which an accepted run proposed
  // what it taught as memory (`memory.propose: own_pr`), one per repository, for the final report.
  ({ id, int }) => `
  CREATE TABLE memory_pulls (
    id ${id},
    run_id ${int} NOT NULL,
    owner TEXT NOT NULL,
    repo TEXT NOT NULL,
    branch TEXT NOT NULL,
    pr_number ${int} NOT NULL,
    pr_url TEXT NOT NULL,
    UNIQUE (run_id, owner, repo)
  );
  `,
  // 9 (SQLite 15, PostgreSQL 10): the webhook deliveries that failed while the store was away and
  // whose redelivery Lisa asked GitHub for, once each, across restarts (redeliver-missed.ts).
  ({ id, int }) => `
  CREATE TABLE redeliveries (
    id ${id},
    delivery_id ${int} NOT NULL UNIQUE,
    guid TEXT NOT NULL,
    asked_at ${int} NOT NULL
  );
  `,
  // 10 (SQLite 16, PostgreSQL 11): each write slot's lane (write-slots.ts: an acknowledgement before
  // a state label before the rest, a tracking edit last) and whether its write went out; slots here now count as sent.
  ({ int }) => `
  ALTER TABLE write_slots ADD COLUMN lane ${int} NOT NULL DEFAULT 2;
  ALTER TABLE write_slots ADD COLUMN sent ${int} NOT NULL DEFAULT 1;
  `,
  // 11 (SQLite 17, PostgreSQL 12): a command's priority (a label only a stale read of the config
  // says is not Lisa's waits behind those surely hers) and its issue, so one of an issue with a
  // later, surer command is taken at that one's priority and the order holds (commands.ts).
  ({ int }) => `
  ALTER TABLE commands ADD COLUMN priority ${int} NOT NULL DEFAULT 0;
  ALTER TABLE commands ADD COLUMN issue TEXT;
  CREATE INDEX pending_commands_by_issue ON commands (issue, priority) WHERE state = 'pending';
  `,
  // 12 (SQLite 18, PostgreSQL 13): the pending commands found without reading every command ever
  // stored; PostgreSQL has had this index from its first migration.
  () => `
  CREATE INDEX IF NOT EXISTS pending_commands ON commands (id) WHERE state = 'pending';
  `,
];
