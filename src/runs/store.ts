import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";

export type RunState = "queued" | "running" | "review" | "failed";
export type StepState = "pending" | "running" | "delivered" | "failed";
/** Where a step is in its delivery; recorded before the side effect it names. */
export type StepPhase = "planning" | "workspace" | "agent" | "gates" | "commit" | "push" | "pull_request" | "done";
export type SessionState = "running" | "succeeded" | "failed" | "interrupted";

export interface RunRow {
  id: number;
  installation_id: number;
  owner: string;
  repo: string;
  issue_number: number;
  issue_title: string;
  issue_body: string;
  requested_by: string;
  /** The validated configuration, as JSON, fixed when the run was created. */
  config: string;
  /** The validated plan, as JSON, once the planning session produced one. */
  plan: string | null;
  state: RunState;
  comment_id: number | null;
  restarts: number;
  error: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export interface StepRow {
  id: number;
  run_id: number;
  /** 0 for the planning step of a multi-repository run, then 1, 2, … in plan order. */
  position: number;
  owner: string;
  repo: string;
  /** Resolved from the repository when the step starts, unless the config or payload named it. */
  base_branch: string | null;
  branch: string;
  /** What the plan asks of this repository; null for a single-repository run. */
  scope: string | null;
  /** Sessions before this iteration belong to earlier tries; `/lisa retry` moves it on. */
  iteration_base: number;
  state: StepState;
  phase: StepPhase;
  worktree: string | null;
  /** The worktree a CLI created itself with its native `--worktree`, once found. */
  native_worktree: string | null;
  /** Commit the branch started from, so a resumed step diffs against the same point. */
  start_sha: string | null;
  /** The agent's validated manifest, kept here once read because the file is deleted. */
  manifest: string | null;
  /** The agent's last final message. */
  summary: string | null;
  /** JSON list of the last gate results: command and whether it passed. */
  gates: string | null;
  /** JSON list of files changed against the base, kept to recompose the PR body later. */
  changed_files: string | null;
  pr_number: number | null;
  pr_url: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

export interface SessionRow {
  id: number;
  step_id: number;
  iteration: number;
  purpose: "plan" | "implement" | "fix_gates" | "resume";
  provider: string;
  model: string | null;
  state: SessionState;
  cost_usd: number;
  turns: number | null;
  /** Process group of the agent while it runs, so a restarted Lisa can stop an orphan. */
  pid: number | null;
  failure_kind: string | null;
  message: string | null;
  started_at: number;
  finished_at: number | null;
}

export interface CommandRow {
  id: number;
  delivery_id: string;
  kind: string;
  payload: string;
  state: "pending" | "done";
  outcome: string | null;
  created_at: number;
}

const SCHEMA = `
  PRAGMA journal_mode = WAL;
  PRAGMA foreign_keys = ON;
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
  -- One active run per issue: a second label or a redelivered webhook cannot start another.
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
`;

export interface NewStep {
  position: number;
  owner: string;
  repo: string;
  branch: string;
  baseBranch: string | null;
  scope: string | null;
}

export type NewRun = Omit<
  RunRow,
  "id" | "plan" | "state" | "comment_id" | "restarts" | "error" | "created_at" | "updated_at" | "finished_at"
>;

/**
 * Lisa's durable state in one SQLite file in the data directory: webhook commands waiting to be
 * handled, and runs with their steps and agent sessions. Every write is committed before the
 * caller goes on to the side effect it records.
 */
export class Store {
  readonly #db: DatabaseSync;
  readonly #now: () => number;

  constructor(file: string, now: () => number = Date.now) {
    if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
    this.#db = new DatabaseSync(file);
    this.#db.exec(SCHEMA);
    this.#now = now;
  }

  close(): void {
    this.#db.close();
  }

  #get<T>(sql: string, ...params: SQLInputValue[]): T | undefined {
    return this.#db.prepare(sql).get(...params) as T | undefined;
  }

  #all<T>(sql: string, ...params: SQLInputValue[]): T[] {
    return this.#db.prepare(sql).all(...params) as T[];
  }

  #run(sql: string, ...params: SQLInputValue[]): number {
    return Number(this.#db.prepare(sql).run(...params).lastInsertRowid);
  }

  #update(table: "runs" | "steps" | "sessions", id: number, changes: Record<string, SQLInputValue>): void {
    const entries = Object.entries(changes);
    if (table !== "sessions") entries.push(["updated_at", this.#now()]);
    const set = entries.map(([key]) => `${key} = ?`).join(", ");
    this.#db.prepare(`UPDATE ${table} SET ${set} WHERE id = ?`).run(...entries.map(([, v]) => v), id);
  }

  /** Records a webhook command once per delivery id; false when it was delivered before. */
  addCommand(deliveryId: string, kind: string, payload: unknown): boolean {
    const result = this.#db
      .prepare("INSERT OR IGNORE INTO commands (delivery_id, kind, payload, created_at) VALUES (?, ?, ?, ?)")
      .run(deliveryId, kind, JSON.stringify(payload), this.#now());
    return result.changes > 0;
  }

  nextCommand(): CommandRow | undefined {
    return this.#get("SELECT * FROM commands WHERE state = 'pending' ORDER BY id LIMIT 1");
  }

  finishCommand(id: number, outcome: string): void {
    this.#db.prepare("UPDATE commands SET state = 'done', outcome = ? WHERE id = ?").run(outcome, id);
  }

  /**
   * Creates a queued run with its first steps (the planning step, or the single repository's step),
   * or returns undefined when the issue already has an active run.
   */
  createRun(run: NewRun, steps: NewStep[]): RunRow | undefined {
    try {
      this.#db.exec("BEGIN IMMEDIATE");
      const now = this.#now();
      const id = this.#run(
        `INSERT INTO runs (installation_id, owner, repo, issue_number, issue_title, issue_body, requested_by, config, state, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)`,
        run.installation_id,
        run.owner,
        run.repo,
        run.issue_number,
        run.issue_title,
        run.issue_body,
        run.requested_by,
        run.config,
        now,
        now,
      );
      for (const step of steps) this.#insertStep(id, step);
      this.#db.exec("COMMIT");
      return this.run(id);
    } catch (error) {
      this.#db.exec("ROLLBACK");
      if ((error as { errcode?: number }).errcode === 2067) return undefined; // SQLITE_CONSTRAINT_UNIQUE
      throw error;
    }
  }

  #insertStep(runId: number, step: NewStep): void {
    const now = this.#now();
    this.#run(
      `INSERT INTO steps (run_id, position, owner, repo, base_branch, branch, scope, state, phase, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
      runId,
      step.position,
      step.owner,
      step.repo,
      step.baseBranch,
      step.branch,
      step.scope,
      step.position === 0 ? "planning" : "workspace",
      now,
      now,
    );
  }

  /** Records the plan and the steps it asks for, in one transaction. */
  addPlannedSteps(runId: number, plan: unknown, steps: NewStep[]): void {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      this.#update("runs", runId, { plan: JSON.stringify(plan) });
      for (const step of steps) this.#insertStep(runId, step);
      this.#db.exec("COMMIT");
    } catch (error) {
      this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  /**
   * Queues a failed run again: its failed step goes back to pending with a fresh iteration budget,
   * finished steps stay finished. False when the issue has another active run.
   */
  retryRun(runId: number): boolean {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      for (const step of this.steps(runId)) {
        if (step.state !== "failed") continue;
        const used = this.#get<{ last: number | null }>("SELECT MAX(iteration) AS last FROM sessions WHERE step_id = ?", step.id);
        this.#update("steps", step.id, { state: "pending", error: null, iteration_base: used?.last ?? 0 });
      }
      this.#update("runs", runId, { state: "queued", error: null, finished_at: null, restarts: 0 });
      this.#db.exec("COMMIT");
      return true;
    } catch (error) {
      this.#db.exec("ROLLBACK");
      if ((error as { errcode?: number }).errcode === 2067) return false;
      throw error;
    }
  }

  /** The issue's most recent run, whatever its state. */
  latestRunFor(owner: string, repo: string, issue: number): RunRow | undefined {
    return this.#get(
      "SELECT * FROM runs WHERE owner = ? AND repo = ? AND issue_number = ? ORDER BY id DESC LIMIT 1",
      owner,
      repo,
      issue,
    );
  }

  run(id: number): RunRow | undefined {
    return this.#get("SELECT * FROM runs WHERE id = ?", id);
  }

  runsIn(state: RunState): RunRow[] {
    return this.#all("SELECT * FROM runs WHERE state = ? ORDER BY id", state);
  }

  /** Marks the oldest queued run running and returns it. */
  claimRun(): RunRow | undefined {
    const run = this.#get<RunRow>("SELECT * FROM runs WHERE state = 'queued' ORDER BY id LIMIT 1");
    if (!run) return undefined;
    this.updateRun(run.id, { state: "running" });
    return this.run(run.id);
  }

  updateRun(id: number, changes: Partial<Pick<RunRow, "state" | "comment_id" | "restarts" | "error" | "finished_at">>): void {
    this.#update("runs", id, changes);
  }

  steps(runId: number): StepRow[] {
    return this.#all("SELECT * FROM steps WHERE run_id = ? ORDER BY position", runId);
  }

  step(id: number): StepRow {
    const step = this.#get<StepRow>("SELECT * FROM steps WHERE id = ?", id);
    if (!step) throw new Error(`step ${id} does not exist`);
    return step;
  }

  updateStep(
    id: number,
    changes: Partial<
      Pick<
        StepRow,
        | "state"
        | "phase"
        | "base_branch"
        | "worktree"
        | "native_worktree"
        | "start_sha"
        | "manifest"
        | "summary"
        | "gates"
        | "changed_files"
        | "scope"
        | "iteration_base"
        | "pr_number"
        | "pr_url"
        | "error"
      >
    >,
  ): void {
    this.#update("steps", id, changes);
  }

  startSession(session: Pick<SessionRow, "step_id" | "iteration" | "purpose" | "provider" | "model">): number {
    return this.#run(
      "INSERT INTO sessions (step_id, iteration, purpose, provider, model, state, started_at) VALUES (?, ?, ?, ?, ?, 'running', ?)",
      session.step_id,
      session.iteration,
      session.purpose,
      session.provider,
      session.model,
      this.#now(),
    );
  }

  finishSession(id: number, changes: Pick<SessionRow, "state" | "cost_usd" | "turns" | "failure_kind" | "message">): void {
    this.#update("sessions", id, { ...changes, finished_at: this.#now() });
  }

  recordSessionPid(id: number, pid: number): void {
    this.#update("sessions", id, { pid });
  }

  sessions(stepId: number): SessionRow[] {
    return this.#all("SELECT * FROM sessions WHERE step_id = ? ORDER BY id", stepId);
  }

  runCost(runId: number): number {
    const row = this.#get<{ total: number | null }>(
      "SELECT SUM(s.cost_usd) AS total FROM sessions s JOIN steps t ON s.step_id = t.id WHERE t.run_id = ?",
      runId,
    );
    return row?.total ?? 0;
  }

  /**
   * Sessions a dead process left running; they will never report, so they end as interrupted.
   * Returns them, with the process groups their agents ran in.
   */
  interruptRunningSessions(): SessionRow[] {
    const running = this.#all<SessionRow>("SELECT * FROM sessions WHERE state = 'running'");
    this.#db
      .prepare(
        "UPDATE sessions SET state = 'interrupted', finished_at = ?, message = 'Lisa stopped during this session' WHERE state = 'running'",
      )
      .run(this.#now());
    return running;
  }
}
