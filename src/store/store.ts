import { randomBytes } from "node:crypto";
import { commandMac, hasValidMac } from "./command-mac.ts";
import { PostgresDriver } from "./postgres-driver.ts";
import type {
  CommandRow,
  EventRow,
  GuidanceRow,
  PassRow,
  RepoConfigRow,
  RunRow,
  RunState,
  SessionRow,
  StepPassRow,
  StepRow,
} from "./rows.ts";
import { type ConnectionChange, isPostgresUrl, type SqlDriver, type SqlValue } from "./sql-driver.ts";
import { SqliteDriver } from "./sqlite-driver.ts";
import {
  nextPassState,
  nextRunState,
  nextStepState,
  type PassEvent,
  type RunEvent,
  type StepEvent,
  TERMINAL_RUN_STATES,
} from "./transitions.ts";
import { reserveWriteSlot, type SlotAnswer, type SlotRequest } from "./write-slots.ts";

export type * from "./rows.ts";

export interface NewStep {
  position: number;
  owner: string;
  repo: string;
  branch: string;
  baseBranch: string | null;
  scope: string | null;
}

export type NewRun = Pick<
  RunRow,
  "installation_id" | "owner" | "repo" | "issue_number" | "issue_title" | "issue_body" | "requested_by" | "config"
>;

export type NewGuidance = Omit<GuidanceRow, "id" | "run_id" | "pass_id" | "status" | "status_note" | "replied" | "created_at">;

type Table = "runs" | "steps" | "sessions" | "passes" | "step_passes" | "guidance";
const TABLES_WITH_UPDATED_AT: ReadonlySet<Table> = new Set(["runs", "steps"]);

/**
 * Lisa's durable state: webhook commands waiting to be handled, and runs with their passes, steps,
 * agent sessions, guidance and event log. One SQLite file in the data directory by default, or a
 * PostgreSQL database (`DATABASE_URL`) shared by web and worker processes. Every write is committed
 * before the caller goes on to the side effect it records, and state changes are compare-and-set on
 * the state they were decided from.
 */
export class Store {
  readonly #db: SqlDriver;
  readonly #now: () => number;
  readonly #commandKey: Buffer;

  /**
   * `location`: a SQLite file (or `:memory:`), or a `postgres://` URL. `commandKey` signs the
   * command rows this store writes and checks those it reads (commandKey()); without one, a key of
   * this store's own, so only the rows it wrote itself are genuine to it.
   */
  constructor(location: string, now: () => number = Date.now, commandKey: Buffer = randomBytes(32)) {
    this.#db = isPostgresUrl(location) ? new PostgresDriver(location) : new SqliteDriver(location);
    this.#now = now;
    this.#commandKey = commandKey;
  }

  close(): void {
    this.#db.close();
  }

  /** Called when the database connection is lost and when it is back (a shared PostgreSQL store only). */
  onConnection(listener: (event: ConnectionChange) => void): void {
    this.#db.onConnection?.(listener);
  }

  #get<T>(sql: string, ...params: SqlValue[]): T | undefined {
    return this.#db.get<T>(sql, params);
  }

  #all<T>(sql: string, ...params: SqlValue[]): T[] {
    return this.#db.all<T>(sql, params);
  }

  #run(sql: string, ...params: SqlValue[]): { id: number; changes: number } {
    return this.#db.run(sql, params);
  }

  #update(table: Table, id: number, changes: Record<string, SqlValue | undefined>): void {
    const entries = Object.entries(changes).filter((entry): entry is [string, SqlValue] => entry[1] !== undefined);
    if (TABLES_WITH_UPDATED_AT.has(table)) entries.push(["updated_at", this.#now()]);
    if (entries.length === 0) return;
    const set = entries.map(([key]) => `${key} = ?`).join(", ");
    this.#run(`UPDATE ${table} SET ${set} WHERE id = ?`, ...entries.map(([, v]) => v), id);
  }

  #depth = 0;

  /** Runs `work` in one immediate transaction: all of it is written, or none. Nested calls join the outer one. */
  #tx<T>(work: () => T): T {
    if (this.#depth > 0) return work();
    this.#depth += 1;
    try {
      return this.#outerTx(work);
    } finally {
      this.#depth -= 1;
    }
  }

  /**
   * Runs `work` as one transaction, and returns undefined with nothing written when it returns
   * undefined (a run's compare-and-set lost): the changes of run-changes.ts, each all or nothing.
   * Not to be nested in another transaction, whose writes it could not take back.
   */
  atomically<T>(work: () => T | undefined): T | undefined {
    if (this.#depth > 0) throw new Error("Store.atomically is a transaction of its own, not a part of another");
    const refused = Symbol("refused");
    try {
      return this.#tx(() => {
        const result = work();
        if (result === undefined) throw refused;
        return result;
      });
    } catch (error) {
      if (error === refused) return undefined;
      throw error;
    }
  }

  #outerTx<T>(work: () => T): T {
    this.#db.begin();
    try {
      const result = work();
      this.#db.commit();
      return result;
    } catch (error) {
      this.#db.rollback();
      throw error;
    }
  }

  /**
   * Runs `work` while holding the named lock, which one process at a time may hold (PostgreSQL's
   * session lock, freed at once if the holder dies); undefined, without running it, when another
   * holds it. `work` asks `held()` before each step: a lost connection frees the lock, and another
   * process may have taken it since.
   */
  async exclusively<T>(name: string, work: (held: () => boolean) => Promise<T>): Promise<T | undefined> {
    if (!this.#db.tryLock(name)) return undefined;
    try {
      return await work(() => this.#db.holds(name));
    } finally {
      this.#db.unlock(name);
    }
  }

  // ── commands ────────────────────────────────────────────────────────────────────────────────

  /**
   * Records a webhook command once per delivery id and, when given, once per event key (the same
   * event redelivered under a new id). False when it was recorded before.
   */
  addCommand(deliveryId: string, kind: string, payload: unknown, eventKey?: string): boolean {
    const row = {
      delivery_id: deliveryId,
      event_key: eventKey ?? null,
      kind,
      payload: JSON.stringify(payload),
      created_at: this.#now(),
    };
    const result = this.#run(
      "INSERT OR IGNORE INTO commands (delivery_id, event_key, kind, payload, created_at, mac) VALUES (?, ?, ?, ?, ?, ?)",
      row.delivery_id,
      row.event_key,
      row.kind,
      row.payload,
      row.created_at,
      commandMac(this.#commandKey, row),
    );
    return result.changes > 0;
  }

  /** Whether Lisa wrote this command row: its MAC is valid. Anyone else who can write the database cannot make one. */
  isGenuine(command: CommandRow): boolean {
    return hasValidMac(this.#commandKey, command);
  }

  /** The oldest pending commands that may run now, up to `limit` (one waiting to be tried again waits its turn). */
  readyCommands(limit = 200): CommandRow[] {
    return this.#all(
      "SELECT * FROM commands WHERE state = 'pending' AND (not_before IS NULL OR not_before <= ?) ORDER BY id LIMIT ?",
      this.#now(),
      limit,
    );
  }

  /** How many runs are in each state. */
  runCountsByState(): { state: RunState; n: number }[] {
    return this.#all("SELECT state, COUNT(*) AS n FROM runs GROUP BY state ORDER BY state");
  }

  /** Pending commands, those waiting to be tried again included. */
  pendingCommands(): number {
    return this.#get<{ n: number }>("SELECT COUNT(*) AS n FROM commands WHERE state = 'pending'")?.n ?? 0;
  }

  /** Counts a failed try of a command and sets when the next may start. */
  retryCommandLater(id: number, notBefore: number): void {
    this.#run("UPDATE commands SET attempts = attempts + 1, not_before = ? WHERE id = ?", notBefore, id);
  }

  /** Whether a run of the issue moved into a state other than queued or running in (`from`, `to`]. */
  runCameToRest(owner: string, repo: string, issue: number, from: number, to: number): boolean {
    const found = this.#get(
      `SELECT 1 FROM events e JOIN runs r ON r.id = e.run_id
       WHERE r.owner = ? AND r.repo = ? AND r.issue_number = ? AND e.to_state NOT IN ('queued', 'running')
         AND e.created_at > ? AND e.created_at <= ? LIMIT 1`,
      owner,
      repo,
      issue,
      from,
      to,
    );
    return found !== undefined;
  }

  /** Up to `limit` gestures (commands, reviews, pushes) recorded before command `id`, newest first. */
  gesturesBefore(id: number, limit: number): CommandRow[] {
    return this.#all("SELECT * FROM commands WHERE id < ? AND kind = 'gesture' ORDER BY id DESC LIMIT ?", id, limit);
  }

  finishCommand(id: number, outcome: string): void {
    this.#run("UPDATE commands SET state = 'done', outcome = ?, finished_at = ? WHERE id = ?", outcome, this.#now(), id);
  }

  // ── config files ────────────────────────────────────────────────────────────────────────────

  /** The config file a worker last read at `path` of a repository, if any. */
  configFile(installationId: number, owner: string, repo: string, path: string): RepoConfigRow | undefined {
    return this.#get(
      "SELECT * FROM repo_configs WHERE installation_id = ? AND owner = ? AND repo = ? AND path = ?",
      installationId,
      owner.toLowerCase(),
      repo.toLowerCase(),
      path,
    );
  }

  /** Records a read of a config file, replacing the one before. */
  saveConfigFile(row: Omit<RepoConfigRow, "id">): void {
    this.#run(
      `INSERT INTO repo_configs (installation_id, owner, repo, path, etag, content, label, validated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (installation_id, owner, repo, path) DO UPDATE SET etag = excluded.etag,
         content = excluded.content, label = excluded.label, validated_at = excluded.validated_at`,
      row.installation_id,
      row.owner.toLowerCase(),
      row.repo.toLowerCase(),
      row.path,
      row.etag,
      row.content,
      row.label,
      row.validated_at,
    );
  }

  // ── runs ────────────────────────────────────────────────────────────────────────────────────

  /**
   * Creates a queued run with its first pass and first steps (the planning step, or the single
   * repository's step), or returns undefined when the issue already has an open run.
   */
  createRun(run: NewRun, steps: NewStep[]): RunRow | undefined {
    try {
      return this.#tx(() => {
        const now = this.#now();
        const { id } = this.#run(
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
        const passId = this.#insertPass(id, 1, "initial", run.requested_by, run.config);
        for (const step of steps) {
          const stepId = this.#insertStep(id, step, 1);
          if (step.position > 0) this.#insertStepPass(stepId, passId, step.scope);
        }
        this.#event(id, 1, "run_created", null, "queued", run.requested_by, null);
        return this.run(id);
      });
    } catch (error) {
      if (this.#db.isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  run(id: number): RunRow | undefined {
    return this.#get("SELECT * FROM runs WHERE id = ?", id);
  }

  /** The issue's most recent run, whatever its state. */
  latestRunFor(owner: string, repo: string, issue: number): RunRow | undefined {
    return this.#get(
      "SELECT * FROM runs WHERE lower(owner) = lower(?) AND lower(repo) = lower(?) AND issue_number = ? ORDER BY id DESC LIMIT 1",
      owner,
      repo,
      issue,
    );
  }

  /** The run and step whose pull request this is, when it is one of Lisa's. */
  stepByPullRequest(owner: string, repo: string, pr: number): { run: RunRow; step: StepRow } | undefined {
    const step = this.#get<StepRow>(
      "SELECT * FROM steps WHERE lower(owner) = lower(?) AND lower(repo) = lower(?) AND pr_number = ? ORDER BY id DESC LIMIT 1",
      owner,
      repo,
      pr,
    );
    const run = step && this.run(step.run_id);
    return run && step ? { run, step } : undefined;
  }

  /** Runs whose tracking comment GitHub refused to bring up to date. */
  runsOwingTracking(): RunRow[] {
    return this.#all("SELECT * FROM runs WHERE tracking_owed = 1 ORDER BY id");
  }

  runsIn(...states: RunState[]): RunRow[] {
    return this.#all(`SELECT * FROM runs WHERE state IN (${states.map(() => "?").join(", ")}) ORDER BY id`, ...states);
  }

  /** Marks a queued run running for `worker`: run `runId`, or the oldest queued one. */
  claimRun(worker: string, runId?: number): RunRow | undefined {
    const queued = runId === undefined ? this.runsIn("queued") : [this.run(runId)];
    for (const run of queued) {
      if (run?.state !== "queued") continue;
      const claimed = this.#tx(() => {
        if (!this.transitionRun(run.id, "claim")) return undefined;
        this.#update("runs", run.id, { worker });
        return this.run(run.id);
      });
      if (claimed) return claimed;
    }
    return undefined;
  }

  /**
   * Takes over a run whose worker stopped renewing its claim: its sessions end as interrupted, the
   * restart is counted, and the run is queued again for `worker` to claim. Undefined when the run
   * is not running any more.
   */
  takeOverRun(runId: number, note: string): RunRow | undefined {
    return this.#tx(() => {
      const run = this.run(runId);
      if (run?.state !== "running") return undefined;
      this.interruptRunSessions(runId, note);
      this.#update("runs", runId, { restarts: run.restarts + 1 });
      this.addEvent(runId, "taken_over", { note });
      return this.transitionRun(runId, "interrupt", { note });
    });
  }

  /**
   * Moves a run along the transition table, as a compare-and-set on the state it is in now, and
   * logs the event. Returns the run in its new state, or undefined when the table refuses the event
   * from the current state (or another writer changed it first).
   */
  transitionRun(runId: number, event: RunEvent, detail: { actor?: string; note?: string } = {}): RunRow | undefined {
    return this.#tx(() => {
      const run = this.run(runId);
      const to = run && nextRunState(run.state, event);
      if (!run || !to) return undefined;
      const now = this.#now();
      const finished = TERMINAL_RUN_STATES.has(to) ? now : null;
      const { changes } = this.#run(
        "UPDATE runs SET state = ?, finished_at = ?, updated_at = ? WHERE id = ? AND state = ?",
        to,
        finished,
        now,
        runId,
        run.state,
      );
      if (changes === 0) return undefined;
      this.#event(runId, run.current_pass, event, run.state, to, detail.actor ?? null, detail.note ?? null);
      return this.run(runId);
    });
  }

  /**
   * Accepts a run in review (or stopped): the run, its current pass and the pass's decision in one
   * transaction, so what the final report says of who accepted it is durable before any of it is
   * published. Undefined when the run's state refuses it.
   */
  recordAcceptance(runId: number, decision: { by: string; via: "approval" | "override" }): RunRow | undefined {
    return this.#tx(() => {
      const note = decision.via === "override" ? "/lisa accept" : undefined;
      const run = this.transitionRun(runId, "accept", { actor: decision.by, ...(note ? { note } : {}) });
      const pass = run && this.currentPass(runId);
      if (!run || !pass) return run;
      this.#passTo(pass, "accept");
      this.updatePass(pass.id, {
        decision: "accept",
        decided_by: decision.by,
        decided_via: note ?? "approval",
        decided_at: this.#now(),
      });
      return run;
    });
  }

  /** The id of the run's last state change, which its GitHub side must show (see markPublished). */
  lastTransition(runId: number): number {
    return (
      this.#get<{ id: number | null }>("SELECT MAX(id) AS id FROM events WHERE run_id = ? AND to_state IS NOT NULL", runId)?.id ??
      0
    );
  }

  /** Records that GitHub shows the run as it stood at state change `eventId` (labels, report, merge, checks). */
  markPublished(runId: number, eventId: number): void {
    this.#run(
      "UPDATE runs SET published_event = ? WHERE id = ? AND (published_event IS NULL OR published_event < ?)",
      eventId,
      runId,
      eventId,
    );
  }

  /**
   * Runs at rest (not queued or running: an executing run publishes its own way) whose last state
   * change GitHub does not show yet: Lisa stopped, or GitHub failed, between the two.
   */
  runsBehindOnGitHub(): (RunRow & { changed_at: number })[] {
    return this.#all<RunRow & { changed_at: number }>(
      `SELECT runs.*, last.id AS last_event, last.created_at AS changed_at FROM runs
         JOIN events last ON last.id = (SELECT MAX(id) FROM events WHERE events.run_id = runs.id AND to_state IS NOT NULL)
       WHERE runs.state NOT IN ('queued', 'running') AND COALESCE(runs.published_event, 0) < last.id ORDER BY runs.id`,
    );
  }

  updateRun(
    id: number,
    changes: Partial<
      Pick<RunRow, "comment_id" | "report_comment_id" | "restarts" | "error" | "config" | "worker" | "tracking_owed">
    >,
  ): void {
    this.#update("runs", id, changes);
  }

  /**
   * Queues a failed run again: its failed steps go back to pending with a fresh iteration budget,
   * finished steps stay finished. The config is the one read from the default branch now.
   */
  retryRun(runId: number, config: string, actor: string): RunRow | undefined {
    return this.#tx(() => {
      const run = this.run(runId);
      if (run?.state !== "failed") return undefined;
      for (const step of this.steps(runId)) {
        if (step.state === "failed") this.#stepTo(step, "again", { error: null, iteration_base: this.#lastIteration(step.id) });
      }
      const pass = this.currentPass(runId);
      if (pass) this.#update("passes", pass.id, { config });
      this.#update("runs", runId, { error: null, restarts: 0, config });
      return this.transitionRun(runId, "retry", { actor });
    });
  }

  #lastIteration(stepId: number): number {
    return this.#get<{ last: number | null }>("SELECT MAX(iteration) AS last FROM sessions WHERE step_id = ?", stepId)?.last ?? 0;
  }

  // ── passes ──────────────────────────────────────────────────────────────────────────────────

  #insertPass(runId: number, number: number, trigger: PassRow["trigger"], requestedBy: string, config: string): number {
    return this.#run(
      "INSERT INTO passes (run_id, number, trigger, requested_by, state, config) VALUES (?, ?, ?, ?, 'queued', ?)",
      runId,
      number,
      trigger,
      requestedBy,
      config,
    ).id;
  }

  passes(runId: number): PassRow[] {
    return this.#all("SELECT * FROM passes WHERE run_id = ? ORDER BY number", runId);
  }

  pass(runId: number, number: number): PassRow | undefined {
    return this.#get("SELECT * FROM passes WHERE run_id = ? AND number = ?", runId, number);
  }

  currentPass(runId: number): PassRow | undefined {
    return this.#get(
      "SELECT p.* FROM passes p JOIN runs r ON r.id = p.run_id AND p.number = r.current_pass WHERE r.id = ?",
      runId,
    );
  }

  /**
   * Starts pass N+1 of a run that may take one (see `RUN_TRANSITIONS.next_pass`): the current pass
   * is superseded, queued guidance and `guidance` are bound to the new pass, and the run is queued.
   * Returns the new pass, or undefined when the run's state refuses it.
   */
  startNextPass(
    runId: number,
    next: {
      trigger: PassRow["trigger"];
      requestedBy: string;
      config: string;
      guidance: NewGuidance[];
      /** `queued_pass` when the pass under way ends with guidance waiting. */
      event?: "next_pass" | "queued_pass";
    },
  ): PassRow | undefined {
    const event = next.event ?? "next_pass";
    return this.#tx(() => {
      const run = this.run(runId);
      if (!run || !nextRunState(run.state, event)) return undefined;
      const current = this.currentPass(runId);
      if (current) this.#passTo(current, "supersede");
      // Blocked steps of a superseded pass are skipped; the new pass plans afresh.
      for (const step of this.steps(runId)) {
        if (step.state === "blocked" || step.state === "pending" || step.state === "running") this.#stepTo(step, "skip");
      }
      const number = run.current_pass + 1;
      const passId = this.#insertPass(runId, number, next.trigger, next.requestedBy, next.config);
      this.#run("UPDATE runs SET current_pass = ? WHERE id = ?", number, runId);
      for (const item of next.guidance) this.#insertGuidance(runId, null, item);
      this.#run("UPDATE guidance SET pass_id = ? WHERE run_id = ? AND pass_id IS NULL", passId, runId);
      if (!this.transitionRun(runId, event, { actor: next.requestedBy, note: next.trigger })) {
        throw new Error(`run ${runId} could not start pass ${number}`);
      }
      return this.pass(runId, number);
    });
  }

  /** Moves a pass along the pass table; false when the table refuses the event from its state. */
  transitionPass(passId: number, event: PassEvent): boolean {
    const pass = this.#get<PassRow>("SELECT * FROM passes WHERE id = ?", passId);
    return pass ? this.#passTo(pass, event) : false;
  }

  #passTo(pass: PassRow, event: PassEvent): boolean {
    const to = nextPassState(pass.state, event);
    if (!to) return false;
    const now = this.#now();
    const started = event === "start" ? now : pass.started_at;
    const finished = ["superseded", "aborted", "accepted", "at_gate"].includes(to) ? now : null;
    return (
      this.#run(
        "UPDATE passes SET state = ?, started_at = ?, finished_at = ? WHERE id = ? AND state = ?",
        to,
        started,
        finished,
        pass.id,
        pass.state,
      ).changes > 0
    );
  }

  updatePass(
    passId: number,
    changes: Partial<
      Pick<
        PassRow,
        | "plan"
        | "recommendation"
        | "refinements"
        | "open_questions"
        | "decision"
        | "decided_by"
        | "decided_via"
        | "decided_at"
        | "config"
      >
    >,
  ): void {
    this.#update("passes", passId, changes);
  }

  // ── steps ───────────────────────────────────────────────────────────────────────────────────

  #insertStep(runId: number, step: NewStep, pass: number): number {
    const now = this.#now();
    return this.#run(
      `INSERT INTO steps (run_id, position, owner, repo, base_branch, branch, scope, pass, state, phase, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
      runId,
      step.position,
      step.owner,
      step.repo,
      step.baseBranch,
      step.branch,
      step.scope,
      pass,
      step.position === 0 ? "planning" : "workspace",
      now,
      now,
    ).id;
  }

  #insertStepPass(stepId: number, passId: number, scope: string | null): void {
    this.#run(
      "INSERT OR IGNORE INTO step_passes (step_id, pass_id, state, scope) VALUES (?, ?, 'pending', ?)",
      stepId,
      passId,
      scope,
    );
  }

  /**
   * Fixes a pass's plan: steps it names that exist are reset for this pass with their new scope,
   * new repositories get new steps, and every other step is left unchanged.
   */
  recordPassPlan(runId: number, passNumber: number, plan: unknown, steps: (NewStep & { followUpOf?: number })[]): void {
    this.#tx(() => {
      const pass = this.pass(runId, passNumber);
      if (!pass) throw new Error(`run ${runId} has no pass ${passNumber}`);
      this.#update("passes", pass.id, { plan: JSON.stringify(plan) });
      if (passNumber === 1) this.#update("runs", runId, { plan: JSON.stringify(plan) });
      const existing = this.steps(runId);
      // A later plan of the same pass (guidance came while planning) may leave out steps the first
      // one named; those that have not started are taken back.
      const named = new Set(steps.map((step) => `${step.owner}/${step.repo}`.toLowerCase()));
      for (const step of existing) {
        if (step.position === 0 || step.pass !== passNumber || step.state !== "pending") continue;
        if (named.has(`${step.owner}/${step.repo}`.toLowerCase())) continue;
        this.#run("DELETE FROM step_passes WHERE step_id = ? AND pass_id = ?", step.id, pass.id);
        if (step.pr_number === null && this.sessions(step.id).length === 0) this.#run("DELETE FROM steps WHERE id = ?", step.id);
        else this.#stepTo(step, "set_aside");
      }
      for (const step of steps) {
        const found = existing.find(
          (s) =>
            s.position > 0 &&
            s.owner.toLowerCase() === step.owner.toLowerCase() &&
            s.repo.toLowerCase() === step.repo.toLowerCase() &&
            s.pr_state !== "merged" &&
            s.pr_state !== "closed",
        );
        if (found && found.pass === passNumber) {
          this.#insertStepPass(found.id, pass.id, step.scope);
          continue;
        }
        if (found) {
          this.#stepTo(found, "replan", {
            pass: passNumber,
            scope: step.scope,
            phase: "workspace",
            start_sha: null,
            worktree: null,
            native_worktree: null,
            error: null,
            iteration_base: this.#lastIteration(found.id),
          });
          this.#insertStepPass(found.id, pass.id, step.scope);
        } else {
          const taken = this.#get<{ last: number | null }>("SELECT MAX(position) AS last FROM steps WHERE run_id = ?", runId);
          const position = passNumber === 1 ? step.position : (taken?.last ?? 0) + 1;
          // Work in a repository whose PR was merged goes to a follow-up branch, never the merged one.
          const merged = existing.some(
            (s) =>
              s.pr_state === "merged" &&
              s.owner.toLowerCase() === step.owner.toLowerCase() &&
              s.repo.toLowerCase() === step.repo.toLowerCase(),
          );
          const branch = merged ? `${step.branch.replace(/-p\d+$/, "")}-p${passNumber}` : step.branch;
          const id = this.#insertStep(runId, { ...step, branch, position }, passNumber);
          this.#insertStepPass(id, pass.id, step.scope);
        }
      }
    });
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
        | "phase"
        | "base_branch"
        | "branch"
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
        | "pr_state"
        | "head_sha"
        | "draft"
        | "gate"
        | "error"
      >
    >,
  ): void {
    this.#update("steps", id, changes);
  }

  /**
   * Moves a step along the step table (src/store/transitions.ts) with `changes`, as a compare-and-set
   * on the state it stood at; false, writing nothing, when the table refuses the event from there.
   */
  moveStep(id: number, event: StepEvent, changes: Parameters<Store["updateStep"]>[1] = {}): boolean {
    return this.#stepTo(this.step(id), event, changes);
  }

  #stepTo(step: StepRow, event: StepEvent, changes: Record<string, SqlValue | undefined> = {}): boolean {
    const to = nextStepState(step.state, event);
    if (!to) return false;
    const entries = Object.entries({ ...changes, state: to }).filter(([, value]) => value !== undefined);
    const result = this.#run(
      `UPDATE steps SET ${entries.map(([key]) => `${key} = ?`).join(", ")} WHERE id = ? AND state = ?`,
      ...entries.map(([, value]) => value as SqlValue),
      step.id,
      step.state,
    );
    return result.changes > 0;
  }

  /** The planning step plans again for a later pass. */
  replanStep(stepId: number, pass: number): void {
    this.#stepTo(this.step(stepId), "replan", {
      pass,
      phase: "planning",
      error: null,
      iteration_base: this.#lastIteration(stepId),
    });
  }

  /** A step whose unpushed work was lost starts its sessions again, with a fresh iteration budget. */
  redoStep(stepId: number): void {
    this.#update("steps", stepId, { phase: "workspace", iteration_base: this.#lastIteration(stepId) });
  }

  /** A blocked step goes again in the same pass with a fresh iteration budget (`/lisa fix`). */
  freshBudget(stepId: number): void {
    this.#stepTo(this.step(stepId), "again", {
      phase: "workspace",
      error: null,
      worktree: null,
      native_worktree: null,
      iteration_base: this.#lastIteration(stepId),
    });
  }

  stepPass(stepId: number, passId: number): StepPassRow | undefined {
    return this.#get("SELECT * FROM step_passes WHERE step_id = ? AND pass_id = ?", stepId, passId);
  }

  /** The per-pass records of one pass, with the step each belongs to. */
  stepPasses(passId: number): StepPassRow[] {
    return this.#all("SELECT * FROM step_passes WHERE pass_id = ? ORDER BY step_id", passId);
  }

  /** Every per-pass record of one step, oldest pass first. */
  stepHistory(stepId: number): (StepPassRow & { number: number })[] {
    return this.#all(
      "SELECT sp.*, p.number FROM step_passes sp JOIN passes p ON p.id = sp.pass_id WHERE sp.step_id = ? ORDER BY p.number",
      stepId,
    );
  }

  updateStepPass(id: number, changes: Partial<Omit<StepPassRow, "id" | "step_id" | "pass_id">>): void {
    this.#update("step_passes", id, changes);
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────────

  startSession(
    session: Pick<SessionRow, "step_id" | "iteration" | "purpose" | "provider" | "model"> & { pass?: number },
  ): number {
    return this.#run(
      "INSERT INTO sessions (step_id, pass, iteration, purpose, provider, model, state, started_at) VALUES (?, ?, ?, ?, ?, ?, 'running', ?)",
      session.step_id,
      session.pass ?? this.step(session.step_id).pass,
      session.iteration,
      session.purpose,
      session.provider,
      session.model,
      this.#now(),
    ).id;
  }

  /** Records how a running session ended; one marked interrupted meanwhile (Lisa shutting down) stays so. */
  finishSession(id: number, changes: Pick<SessionRow, "state" | "cost_usd" | "turns" | "failure_kind" | "message">): void {
    this.#run(
      "UPDATE sessions SET state = ?, cost_usd = ?, turns = ?, failure_kind = ?, message = ?, finished_at = ? WHERE id = ? AND state = 'running'",
      changes.state,
      changes.cost_usd,
      changes.turns,
      changes.failure_kind,
      changes.message,
      this.#now(),
      id,
    );
  }

  recordSessionPid(id: number, pid: number, identity: string | undefined): void {
    this.#update("sessions", id, { pid, pid_identity: identity ?? null });
  }

  sessions(stepId: number): SessionRow[] {
    return this.#all("SELECT * FROM sessions WHERE step_id = ? ORDER BY id", stepId);
  }

  /** Agent spend of a run, or of one of its passes. */
  runCost(runId: number, pass?: number): number {
    const row = this.#get<{ total: number | null }>(
      `SELECT SUM(s.cost_usd) AS total FROM sessions s JOIN steps t ON s.step_id = t.id WHERE t.run_id = ?${pass === undefined ? "" : " AND s.pass = ?"}`,
      runId,
      ...(pass === undefined ? [] : [pass]),
    );
    return row?.total ?? 0;
  }

  /** Ends the running sessions of one run as interrupted and returns them (a hand-back or a takeover). */
  interruptRunSessions(runId: number, message: string): SessionRow[] {
    const running = this.runningSessions(runId);
    for (const session of running) {
      this.#run(
        "UPDATE sessions SET state = 'interrupted', finished_at = ?, message = ? WHERE id = ? AND state = 'running'",
        this.#now(),
        message,
        session.id,
      );
    }
    return running;
  }

  /** Sessions of a run still running, e.g. to stop them on `/lisa abort`. */
  runningSessions(runId: number): SessionRow[] {
    return this.#all(
      "SELECT s.* FROM sessions s JOIN steps t ON s.step_id = t.id WHERE t.run_id = ? AND s.state = 'running'",
      runId,
    );
  }

  /**
   * Sessions a dead process left running; they will never report, so they end as interrupted.
   * Returns them, with the process groups their agents ran in.
   */
  interruptRunningSessions(): SessionRow[] {
    const running = this.#all<SessionRow>("SELECT * FROM sessions WHERE state = 'running'");
    this.#run(
      "UPDATE sessions SET state = 'interrupted', finished_at = ?, message = 'Lisa stopped during this session' WHERE state = 'running'",
      this.#now(),
    );
    return running;
  }

  // ── guidance ────────────────────────────────────────────────────────────────────────────────

  /**
   * One row per delivery and comment. UNIQUE (delivery_id, github_id) cannot see a NULL github_id
   * (a command's or a review body's text), so those are matched on their text too: a command handled
   * again after a crash adds nothing, while the refinements of one continue stay apart.
   */
  #insertGuidance(runId: number, passId: number | null, item: NewGuidance): void {
    this.#run(
      `INSERT OR IGNORE INTO guidance (run_id, pass_id, delivery_id, source, owner, repo, pr_number, author, url, github_id, path, line, diff_hunk, outdated, body, created_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE NOT EXISTS (SELECT 1 FROM guidance WHERE delivery_id = ? AND github_id IS NOT DISTINCT FROM ? AND source = ? AND body = ?)`,
      runId,
      passId,
      item.delivery_id,
      item.source,
      item.owner,
      item.repo,
      item.pr_number,
      item.author,
      item.url,
      item.github_id,
      item.path,
      item.line,
      item.diff_hunk,
      item.outdated,
      item.body,
      this.#now(),
      item.delivery_id,
      item.github_id,
      item.source,
      item.body,
    );
  }

  /**
   * Guidance for a pass that has not fixed its plan joins it; otherwise it waits, queued, for the
   * next pass. Returns where it went.
   */
  addGuidance(runId: number, items: NewGuidance[], joinPass: number | undefined): void {
    this.#tx(() => {
      for (const item of items) this.#insertGuidance(runId, joinPass ?? null, item);
    });
  }

  guidanceFor(passId: number): GuidanceRow[] {
    return this.#all("SELECT * FROM guidance WHERE pass_id = ? ORDER BY id", passId);
  }

  /** Guidance waiting for the next pass. */
  queuedGuidance(runId: number): GuidanceRow[] {
    return this.#all("SELECT * FROM guidance WHERE run_id = ? AND pass_id IS NULL ORDER BY id", runId);
  }

  /** Every guidance item of a run bound to a pass, oldest first: the ledger later passes must keep. */
  guidanceLedger(runId: number): (GuidanceRow & { pass: number })[] {
    return this.#all(
      "SELECT g.*, p.number AS pass FROM guidance g JOIN passes p ON p.id = g.pass_id WHERE g.run_id = ? ORDER BY g.id",
      runId,
    );
  }

  updateGuidance(id: number, changes: Partial<Pick<GuidanceRow, "status" | "status_note" | "replied">>): void {
    this.#update("guidance", id, changes);
  }

  // ── events ──────────────────────────────────────────────────────────────────────────────────

  #event(
    runId: number,
    pass: number | null,
    kind: string,
    from: string | null,
    to: string | null,
    actor: string | null,
    detail: string | null,
  ): void {
    this.#run(
      "INSERT INTO events (run_id, pass, kind, from_state, to_state, actor, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      runId,
      pass,
      kind,
      from,
      to,
      actor,
      detail,
      this.#now(),
    );
  }

  /** Logs something that happened to a run without a state change, e.g. a human push or a dropped PR. */
  addEvent(runId: number, kind: string, detail: { actor?: string; note?: string; pass?: number } = {}): void {
    const pass = detail.pass ?? this.run(runId)?.current_pass ?? null;
    this.#event(runId, pass, kind, null, null, detail.actor ?? null, detail.note ?? null);
  }

  events(runId: number): EventRow[] {
    return this.#all("SELECT * FROM events WHERE run_id = ? ORDER BY id", runId);
  }

  // ── GitHub write pacing ─────────────────────────────────────────────────────────────────────

  /** Takes an installation's next write slot GitHub's limits allow, in one transaction (write-slots.ts). */
  reserveWriteSlot(request: SlotRequest): SlotAnswer {
    return this.#tx(() => reserveWriteSlot(this.#db, this.#now(), request));
  }
}
