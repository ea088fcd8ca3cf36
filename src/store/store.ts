import { AsyncLocalStorage } from "node:async_hooks";
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
import { join, raw, type Sql, sql } from "./sql.ts";
import { type ConnectionChange, isPostgresUrl, type SqlDriver, type SqlStatements, type SqlValue } from "./sql-driver.ts";
import { SqliteDriver } from "./sqlite-driver.ts";
import {
  nextPassState,
  nextRunState,
  nextStepState,
  type PassEvent,
  phaseMoveAllowed,
  type RunEvent,
  type StepEvent,
  type StepPhase,
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

/** What the workflow records on a step; its state and phase change only through moveStep and enterPhase. */
export type StepFields = Partial<
  Pick<
    StepRow,
    | "base_branch"
    | "branch"
    | "worktree"
    | "native_worktree"
    | "start_sha"
    | "manifest"
    | "summary"
    | "gates"
    | "changed_files"
    | "pr_number"
    | "pr_url"
    | "pr_state"
    | "head_sha"
    | "draft"
    | "gate"
    | "error"
  >
>;

/** What the workflow records on a step's record for a pass; its state follows the step's (moveStep). */
export type StepPassFields = Partial<Omit<StepPassRow, "id" | "step_id" | "pass_id" | "state">>;

/** The columns of a run that change with its state: why it failed, and one more restart. */
export type RunStateFields = { error?: string | null; restart?: true };

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

  /** Resolves once the database is reachable and its schema migrated; rejects saying why not. */
  async ready(): Promise<void> {
    await this.#db.ready?.();
  }

  async close(): Promise<void> {
    await this.#db.close();
  }

  /** Called when the database connection is lost and when it is back (a shared PostgreSQL store only). */
  onConnection(listener: (event: ConnectionChange) => void): void {
    this.#db.onConnection?.(listener);
  }

  /** The open transaction's statements inside one, the connection's outside. */
  #statements(): SqlStatements {
    return this.#transaction.getStore() ?? this.#db;
  }

  async #get<T>(query: Sql): Promise<T | undefined> {
    return (await this.#statements().all<T>(query))[0];
  }

  #all<T>(query: Sql): Promise<T[]> {
    return this.#statements().all<T>(query);
  }

  #run(query: Sql): Promise<{ changes: number }> {
    return this.#statements().run(query);
  }

  /** Runs an INSERT … RETURNING id: the new row's id. */
  async #insert(query: Sql): Promise<number> {
    const { rows } = await this.#statements().run<{ id: number }>(query);
    return Number(rows[0]?.id);
  }

  async #update(table: Table, id: number, changes: Record<string, SqlValue | undefined>): Promise<void> {
    const entries = definedEntries(changes);
    if (TABLES_WITH_UPDATED_AT.has(table)) entries.push(["updated_at", this.#now()]);
    if (entries.length === 0) return;
    await this.#run(sql`UPDATE ${raw(table)} SET ${assignments(entries)} WHERE id = ${id}`);
  }

  /**
   * The transaction the current call chain runs in: the store's methods called from inside `work`
   * join it, and calls from elsewhere (another webhook, another run) stay out of it.
   */
  readonly #transaction = new AsyncLocalStorage<SqlStatements>();

  /**
   * Runs `work` in one transaction: all of it is written, or none. Nested calls join the outer one.
   * `lock`: the key (a run's, an installation's slots') that what `work` reads and then writes
   * depends on; transactions on other keys go on beside it (PostgreSQL; SQLite has one writer).
   */
  async #tx<T>(work: () => Promise<T>, lock?: string): Promise<T> {
    const open = this.#transaction.getStore();
    if (open) {
      if (lock) await open.lock?.(lock);
      return work();
    }
    return this.#db.transaction((tx) =>
      this.#transaction.run(tx, async () => {
        if (lock) await tx.lock?.(lock);
        return work();
      }),
    );
  }

  /**
   * Runs `work` as one transaction, and returns undefined with nothing written when it returns
   * undefined (a run's compare-and-set lost): the changes of run-changes.ts, each all or nothing.
   * Not to be nested in another transaction, whose writes it could not take back. `runId`: the run
   * whose rows it reads before it writes, locked for its length.
   */
  async atomically<T>(work: () => Promise<T | undefined>, runId?: number): Promise<T | undefined> {
    if (this.#transaction.getStore()) throw new Error("Store.atomically is a transaction of its own, not a part of another");
    const refused = Symbol("refused");
    try {
      return await this.#tx(
        async () => {
          const result = await work();
          if (result === undefined) throw refused;
          return result;
        },
        runId === undefined ? undefined : runLock(runId),
      );
    } catch (error) {
      if (error === refused) return undefined;
      throw error;
    }
  }

  /**
   * Runs `work` while holding the named lock, which one process at a time may hold (PostgreSQL's
   * session lock, freed at once if the holder dies); undefined, without running it, when another
   * holds it. `work` asks `held()` before each step: a lost connection frees the lock, and another
   * process may have taken it since.
   */
  async exclusively<T>(name: string, work: (held: () => Promise<boolean>) => Promise<T>): Promise<T | undefined> {
    if (!(await this.#db.tryLock(name))) return undefined;
    try {
      return await work(() => this.#db.holds(name));
    } finally {
      await this.#db.unlock(name);
    }
  }

  // ── commands ────────────────────────────────────────────────────────────────────────────────

  /**
   * Records a webhook command once per delivery id and, when given, once per event key (the same
   * event redelivered under a new id). False when it was recorded before.
   */
  async addCommand(deliveryId: string, kind: string, payload: unknown, eventKey?: string): Promise<boolean> {
    const row = {
      delivery_id: deliveryId,
      event_key: eventKey ?? null,
      kind,
      payload: JSON.stringify(payload),
      created_at: this.#now(),
    };
    const result = await this.#run(
      sql`INSERT INTO commands (delivery_id, event_key, kind, payload, created_at, mac) VALUES (${row.delivery_id}, ${row.event_key}, ${row.kind}, ${row.payload}, ${row.created_at}, ${commandMac(this.#commandKey, row)}) ON CONFLICT DO NOTHING`,
    );
    return result.changes > 0;
  }

  /** Whether Lisa wrote this command row: its MAC is valid. Anyone else who can write the database cannot make one. */
  isGenuine(command: CommandRow): boolean {
    return hasValidMac(this.#commandKey, command);
  }

  /** The oldest pending commands that may run now, up to `limit` (one waiting to be tried again waits its turn). */
  async readyCommands(limit = 200): Promise<CommandRow[]> {
    return this.#all(
      sql`SELECT * FROM commands WHERE state = 'pending' AND (not_before IS NULL OR not_before <= ${this.#now()}) ORDER BY id LIMIT ${limit}`,
    );
  }

  /** How many runs are in each state. */
  async runCountsByState(): Promise<{ state: RunState; n: number }[]> {
    return this.#all(sql`SELECT state, COUNT(*) AS n FROM runs GROUP BY state ORDER BY state`);
  }

  /** Pending commands, those waiting to be tried again included. */
  async pendingCommands(): Promise<number> {
    return (await this.#get<{ n: number }>(sql`SELECT COUNT(*) AS n FROM commands WHERE state = 'pending'`))?.n ?? 0;
  }

  /** Counts a failed try of a command and sets when the next may start. */
  async retryCommandLater(id: number, notBefore: number): Promise<void> {
    await this.#run(sql`UPDATE commands SET attempts = attempts + 1, not_before = ${notBefore} WHERE id = ${id}`);
  }

  /** Whether a run of the issue moved into a state other than queued or running in (`from`, `to`]. */
  async runCameToRest(owner: string, repo: string, issue: number, from: number, to: number): Promise<boolean> {
    const found = await this.#get(sql`SELECT 1 FROM events e JOIN runs r ON r.id = e.run_id
       WHERE r.owner = ${owner} AND r.repo = ${repo} AND r.issue_number = ${issue} AND e.to_state NOT IN ('queued', 'running')
         AND e.created_at > ${from} AND e.created_at <= ${to} LIMIT 1`);
    return found !== undefined;
  }

  /** Up to `limit` gestures (commands, reviews, pushes) recorded before command `id`, newest first. */
  async gesturesBefore(id: number, limit: number): Promise<CommandRow[]> {
    return this.#all(sql`SELECT * FROM commands WHERE id < ${id} AND kind = 'gesture' ORDER BY id DESC LIMIT ${limit}`);
  }

  async finishCommand(id: number, outcome: string): Promise<void> {
    await this.#run(sql`UPDATE commands SET state = 'done', outcome = ${outcome}, finished_at = ${this.#now()} WHERE id = ${id}`);
  }

  // ── config files ────────────────────────────────────────────────────────────────────────────

  /** The config file a worker last read at `path` of a repository, if any. */
  async configFile(installationId: number, owner: string, repo: string, path: string): Promise<RepoConfigRow | undefined> {
    return this.#get(
      sql`SELECT * FROM repo_configs WHERE installation_id = ${installationId} AND owner = ${owner.toLowerCase()} AND repo = ${repo.toLowerCase()} AND path = ${path}`,
    );
  }

  /** Records a read of a config file, replacing the one before. */
  async saveConfigFile(row: Omit<RepoConfigRow, "id">): Promise<void> {
    await this.#run(sql`INSERT INTO repo_configs (installation_id, owner, repo, path, etag, content, label, validated_at)
       VALUES (${row.installation_id}, ${row.owner.toLowerCase()}, ${row.repo.toLowerCase()}, ${row.path}, ${row.etag}, ${row.content}, ${row.label}, ${row.validated_at})
       ON CONFLICT (installation_id, owner, repo, path) DO UPDATE SET etag = excluded.etag,
         content = excluded.content, label = excluded.label, validated_at = excluded.validated_at`);
  }

  // ── runs ────────────────────────────────────────────────────────────────────────────────────

  /**
   * Creates a queued run with its first pass and first steps (the planning step, or the single
   * repository's step), or returns undefined when the issue already has an open run.
   */
  async createRun(run: NewRun, steps: NewStep[]): Promise<RunRow | undefined> {
    try {
      return await this.#tx(async () => {
        const now = this.#now();
        const id =
          await this.#insert(sql`INSERT INTO runs (installation_id, owner, repo, issue_number, issue_title, issue_body, requested_by, config, state, created_at, updated_at)
           VALUES (${run.installation_id}, ${run.owner}, ${run.repo}, ${run.issue_number}, ${run.issue_title}, ${run.issue_body}, ${run.requested_by}, ${run.config}, 'queued', ${now}, ${now}) RETURNING id`);
        const passId = await this.#insertPass(id, 1, "initial", run.requested_by, run.config);
        for (const step of steps) {
          const stepId = await this.#insertStep(id, step, 1);
          if (step.position > 0) await this.#insertStepPass(stepId, passId, step.scope);
        }
        await this.#event(id, 1, "run_created", null, "queued", run.requested_by, null);
        return this.run(id);
      });
    } catch (error) {
      if (this.#db.isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async run(id: number): Promise<RunRow | undefined> {
    return this.#get(sql`SELECT * FROM runs WHERE id = ${id}`);
  }

  /** The issue's most recent run, whatever its state. */
  async latestRunFor(owner: string, repo: string, issue: number): Promise<RunRow | undefined> {
    return this.#get(
      sql`SELECT * FROM runs WHERE lower(owner) = lower(${owner}) AND lower(repo) = lower(${repo}) AND issue_number = ${issue} ORDER BY id DESC LIMIT 1`,
    );
  }

  /** The run and step whose pull request this is, when it is one of Lisa's. */
  async stepByPullRequest(owner: string, repo: string, pr: number): Promise<{ run: RunRow; step: StepRow } | undefined> {
    const step = await this.#get<StepRow>(
      sql`SELECT * FROM steps WHERE lower(owner) = lower(${owner}) AND lower(repo) = lower(${repo}) AND pr_number = ${pr} ORDER BY id DESC LIMIT 1`,
    );
    const run = step && (await this.run(step.run_id));
    return run && step ? { run, step } : undefined;
  }

  /** Runs whose tracking comment GitHub refused to bring up to date. */
  async runsOwingTracking(): Promise<RunRow[]> {
    return this.#all(sql`SELECT * FROM runs WHERE tracking_owed = 1 ORDER BY id`);
  }

  async runsIn(...states: RunState[]): Promise<RunRow[]> {
    return this.#all(sql`SELECT * FROM runs WHERE state IN (${join(states.map((state) => sql`${state}`))}) ORDER BY id`);
  }

  /** Marks a queued run running for `worker`: run `runId`, or the oldest queued one. */
  async claimRun(worker: string, runId?: number): Promise<RunRow | undefined> {
    const queued = runId === undefined ? await this.runsIn("queued") : [await this.run(runId)];
    for (const run of queued) {
      if (run?.state !== "queued") continue;
      const claimed = await this.#tx(async () => {
        if (!(await this.transitionRun(run.id, "claim"))) return undefined;
        await this.#update("runs", run.id, { worker });
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
  async takeOverRun(runId: number, note: string): Promise<RunRow | undefined> {
    return this.#tx(async () => {
      const run = await this.run(runId);
      if (run?.state !== "running") return undefined;
      await this.interruptRunSessions(runId, note);
      await this.addEvent(runId, "taken_over", { note });
      return this.transitionRun(runId, "interrupt", { note }, { restart: true });
    }, runLock(runId));
  }

  /**
   * Moves a run along the transition table, as a compare-and-set on the state it is in now, and
   * logs the event; `fields` change with it. Returns the run in its new state, or undefined when the
   * table refuses the event from the current state (or another writer changed it first).
   */
  async transitionRun(
    runId: number,
    event: RunEvent,
    detail: { actor?: string; note?: string } = {},
    fields: RunStateFields = {},
  ): Promise<RunRow | undefined> {
    return this.#tx(async () => {
      const run = await this.run(runId);
      const to = run && nextRunState(run.state, event);
      if (!run || !to) return undefined;
      const now = this.#now();
      const finished = TERMINAL_RUN_STATES.has(to) ? now : null;
      const error = fields.error === undefined ? raw("") : sql`, error = ${fields.error}`;
      const restart = fields.restart ? raw(", restarts = restarts + 1") : raw("");
      const { changes } = await this.#run(
        sql`UPDATE runs SET state = ${to}, finished_at = ${finished}, updated_at = ${now}${error}${restart} WHERE id = ${runId} AND state = ${run.state}`,
      );
      if (changes === 0) return undefined;
      await this.#event(runId, run.current_pass, event, run.state, to, detail.actor ?? null, detail.note ?? null);
      return this.run(runId);
    }, runLock(runId));
  }

  /**
   * Accepts a run in review (or stopped): the run, its current pass and the pass's decision in one
   * transaction, so what the final report says of who accepted it is durable before any of it is
   * published. Undefined when the run's state refuses it.
   */
  async recordAcceptance(runId: number, decision: { by: string; via: "approval" | "override" }): Promise<RunRow | undefined> {
    return this.#tx(async () => {
      const note = decision.via === "override" ? "/lisa accept" : undefined;
      const run = await this.transitionRun(runId, "accept", { actor: decision.by, ...(note ? { note } : {}) });
      const pass = run && (await this.currentPass(runId));
      if (!run || !pass) return run;
      await this.#passTo(pass, "accept");
      await this.#update("passes", pass.id, {
        decision: "accept",
        decided_by: decision.by,
        decided_via: note ?? "approval",
        decided_at: this.#now(),
      });
      return run;
    }, runLock(runId));
  }

  /** The id of the run's last state change, which its GitHub side must show (see markPublished). */
  async lastTransition(runId: number): Promise<number> {
    return (
      (
        await this.#get<{ id: number | null }>(
          sql`SELECT MAX(id) AS id FROM events WHERE run_id = ${runId} AND to_state IS NOT NULL`,
        )
      )?.id ?? 0
    );
  }

  /** Records that GitHub shows the run as it stood at state change `eventId` (labels, report, merge, checks). */
  async markPublished(runId: number, eventId: number): Promise<void> {
    await this.#run(
      sql`UPDATE runs SET published_event = ${eventId} WHERE id = ${runId} AND (published_event IS NULL OR published_event < ${eventId})`,
    );
  }

  /**
   * Runs at rest (not queued or running: an executing run publishes its own way) whose last state
   * change GitHub does not show yet: Lisa stopped, or GitHub failed, between the two.
   */
  async runsBehindOnGitHub(): Promise<(RunRow & { changed_at: number })[]> {
    return this.#all<
      RunRow & { changed_at: number }
    >(sql`SELECT runs.*, last.id AS last_event, last.created_at AS changed_at FROM runs
         JOIN events last ON last.id = (SELECT MAX(id) FROM events WHERE events.run_id = runs.id AND to_state IS NOT NULL)
       WHERE runs.state NOT IN ('queued', 'running') AND COALESCE(runs.published_event, 0) < last.id ORDER BY runs.id`);
  }

  /** The issue comment that tracks the run, once written. */
  async recordTrackingComment(runId: number, commentId: number): Promise<void> {
    await this.#update("runs", runId, { comment_id: commentId });
  }

  /** Whether the tracking comment owes an edit GitHub refused, so any worker writes it later. */
  async oweTracking(runId: number, owed: boolean): Promise<void> {
    await this.#update("runs", runId, { tracking_owed: owed ? 1 : 0 });
  }

  /** The issue comment with the run's final report, once written. */
  async recordReportComment(runId: number, commentId: number): Promise<void> {
    await this.#update("runs", runId, { report_comment_id: commentId });
  }

  /**
   * Queues a failed run again: its failed steps go back to pending with a fresh iteration budget,
   * finished steps stay finished. The config is the one read from the default branch now.
   */
  async retryRun(runId: number, config: string, actor: string): Promise<RunRow | undefined> {
    return this.#tx(async () => {
      const run = await this.run(runId);
      if (run?.state !== "failed") return undefined;
      for (const step of await this.steps(runId)) {
        if (step.state === "failed")
          await this.#stepTo(step, "again", { error: null, iteration_base: await this.#lastIteration(step.id) });
      }
      const pass = await this.currentPass(runId);
      if (pass) await this.#update("passes", pass.id, { config });
      await this.#update("runs", runId, { error: null, restarts: 0, config });
      return this.transitionRun(runId, "retry", { actor });
    }, runLock(runId));
  }

  async #lastIteration(stepId: number): Promise<number> {
    return (
      (await this.#get<{ last: number | null }>(sql`SELECT MAX(iteration) AS last FROM sessions WHERE step_id = ${stepId}`))
        ?.last ?? 0
    );
  }

  // ── passes ──────────────────────────────────────────────────────────────────────────────────

  async #insertPass(
    runId: number,
    number: number,
    trigger: PassRow["trigger"],
    requestedBy: string,
    config: string,
  ): Promise<number> {
    return this.#insert(
      sql`INSERT INTO passes (run_id, number, trigger, requested_by, state, config) VALUES (${runId}, ${number}, ${trigger}, ${requestedBy}, 'queued', ${config}) RETURNING id`,
    );
  }

  async passes(runId: number): Promise<PassRow[]> {
    return this.#all(sql`SELECT * FROM passes WHERE run_id = ${runId} ORDER BY number`);
  }

  async pass(runId: number, number: number): Promise<PassRow | undefined> {
    return this.#get(sql`SELECT * FROM passes WHERE run_id = ${runId} AND number = ${number}`);
  }

  async currentPass(runId: number): Promise<PassRow | undefined> {
    return this.#get(
      sql`SELECT p.* FROM passes p JOIN runs r ON r.id = p.run_id AND p.number = r.current_pass WHERE r.id = ${runId}`,
    );
  }

  /**
   * Starts pass N+1 of a run that may take one (see `RUN_TRANSITIONS.next_pass`): the current pass
   * is superseded, queued guidance and `guidance` are bound to the new pass, and the run is queued.
   * Returns the new pass, or undefined when the run's state refuses it.
   */
  async startNextPass(
    runId: number,
    next: {
      trigger: PassRow["trigger"];
      requestedBy: string;
      config: string;
      guidance: NewGuidance[];
      /** `queued_pass` when the pass under way ends with guidance waiting. */
      event?: "next_pass" | "queued_pass";
    },
  ): Promise<PassRow | undefined> {
    const event = next.event ?? "next_pass";
    return this.#tx(async () => {
      const run = await this.run(runId);
      if (!run || !nextRunState(run.state, event)) return undefined;
      const current = await this.currentPass(runId);
      if (current) await this.#passTo(current, "supersede");
      // Blocked steps of a superseded pass are skipped; the new pass plans afresh.
      for (const step of await this.steps(runId)) {
        if (step.state === "blocked" || step.state === "pending" || step.state === "running") await this.#stepTo(step, "skip");
      }
      const number = run.current_pass + 1;
      const passId = await this.#insertPass(runId, number, next.trigger, next.requestedBy, next.config);
      await this.#run(sql`UPDATE runs SET current_pass = ${number} WHERE id = ${runId}`);
      for (const item of next.guidance) await this.#insertGuidance(runId, null, item);
      await this.#run(sql`UPDATE guidance SET pass_id = ${passId} WHERE run_id = ${runId} AND pass_id IS NULL`);
      if (!(await this.transitionRun(runId, event, { actor: next.requestedBy, note: next.trigger }))) {
        throw new Error(`run ${runId} could not start pass ${number}`);
      }
      return this.pass(runId, number);
    }, runLock(runId));
  }

  /** Moves a pass along the pass table; false when the table refuses the event from its state. */
  async transitionPass(passId: number, event: PassEvent): Promise<boolean> {
    const pass = await this.#get<PassRow>(sql`SELECT * FROM passes WHERE id = ${passId}`);
    return pass ? await this.#passTo(pass, event) : false;
  }

  async #passTo(pass: PassRow, event: PassEvent): Promise<boolean> {
    const to = nextPassState(pass.state, event);
    if (!to) return false;
    const now = this.#now();
    const started = event === "start" ? now : pass.started_at;
    const finished = ["superseded", "aborted", "accepted", "at_gate"].includes(to) ? now : null;
    return (
      (
        await this.#run(
          sql`UPDATE passes SET state = ${to}, started_at = ${started}, finished_at = ${finished} WHERE id = ${pass.id} AND state = ${pass.state}`,
        )
      ).changes > 0
    );
  }

  /** The configuration a later pass runs with: the default branch's when it started. */
  async recordPassConfig(passId: number, config: string): Promise<void> {
    await this.#update("passes", passId, { config });
  }

  /** The pass's gate opens with what the agents recommend; false when the pass is not ascending. */
  async openGate(passId: number, outcome: Pick<PassRow, "recommendation" | "refinements" | "open_questions">): Promise<boolean> {
    return this.#tx(
      async () => {
        const pass = await this.#get<PassRow>(sql`SELECT * FROM passes WHERE id = ${passId}`);
        if (!pass || !(await this.#passTo(pass, "gate_open"))) return false;
        await this.#update("passes", passId, outcome);
        return true;
      },
      await this.#runLockOfPass(passId),
    );
  }

  async #runLockOfPass(passId: number): Promise<string | undefined> {
    const pass = await this.#get<{ run_id: number }>(sql`SELECT run_id FROM passes WHERE id = ${passId}`);
    return pass && runLock(pass.run_id);
  }

  // ── steps ───────────────────────────────────────────────────────────────────────────────────

  async #insertStep(runId: number, step: NewStep, pass: number): Promise<number> {
    const now = this.#now();
    return this.#insert(sql`INSERT INTO steps (run_id, position, owner, repo, base_branch, branch, scope, pass, state, phase, created_at, updated_at)
       VALUES (${runId}, ${step.position}, ${step.owner}, ${step.repo}, ${step.baseBranch}, ${step.branch}, ${step.scope}, ${pass}, 'pending', ${step.position === 0 ? "planning" : "workspace"}, ${now}, ${now}) RETURNING id`);
  }

  async #insertStepPass(stepId: number, passId: number, scope: string | null): Promise<void> {
    await this.#run(
      sql`INSERT INTO step_passes (step_id, pass_id, state, scope) VALUES (${stepId}, ${passId}, 'pending', ${scope}) ON CONFLICT DO NOTHING`,
    );
  }

  /**
   * Fixes a pass's plan: steps it names that exist are reset for this pass with their new scope,
   * new repositories get new steps, and every other step is left unchanged.
   */
  async recordPassPlan(
    runId: number,
    passNumber: number,
    plan: unknown,
    steps: (NewStep & { followUpOf?: number })[],
  ): Promise<void> {
    await this.#tx(async () => {
      const pass = await this.pass(runId, passNumber);
      if (!pass) throw new Error(`run ${runId} has no pass ${passNumber}`);
      await this.#update("passes", pass.id, { plan: JSON.stringify(plan) });
      if (passNumber === 1) await this.#update("runs", runId, { plan: JSON.stringify(plan) });
      const existing = await this.steps(runId);
      // A later plan of the same pass (guidance came while planning) may leave out steps the first
      // one named; those that have not started are taken back.
      const named = new Set(steps.map((step) => `${step.owner}/${step.repo}`.toLowerCase()));
      for (const step of existing) {
        if (step.position === 0 || step.pass !== passNumber || step.state !== "pending") continue;
        if (named.has(`${step.owner}/${step.repo}`.toLowerCase())) continue;
        await this.#run(sql`DELETE FROM step_passes WHERE step_id = ${step.id} AND pass_id = ${pass.id}`);
        if (step.pr_number === null && (await this.sessions(step.id)).length === 0)
          await this.#run(sql`DELETE FROM steps WHERE id = ${step.id}`);
        else await this.#stepTo(step, "set_aside");
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
          await this.#insertStepPass(found.id, pass.id, step.scope);
          continue;
        }
        if (found) {
          await this.#stepTo(found, "replan", {
            pass: passNumber,
            scope: step.scope,
            phase: "workspace",
            start_sha: null,
            worktree: null,
            native_worktree: null,
            error: null,
            iteration_base: await this.#lastIteration(found.id),
          });
          await this.#insertStepPass(found.id, pass.id, step.scope);
        } else {
          const taken = await this.#get<{ last: number | null }>(
            sql`SELECT MAX(position) AS last FROM steps WHERE run_id = ${runId}`,
          );
          const position = passNumber === 1 ? step.position : (taken?.last ?? 0) + 1;
          // Work in a repository whose PR was merged goes to a follow-up branch, never the merged one.
          const merged = existing.some(
            (s) =>
              s.pr_state === "merged" &&
              s.owner.toLowerCase() === step.owner.toLowerCase() &&
              s.repo.toLowerCase() === step.repo.toLowerCase(),
          );
          const branch = merged ? `${step.branch.replace(/-p\d+$/, "")}-p${passNumber}` : step.branch;
          const id = await this.#insertStep(runId, { ...step, branch, position }, passNumber);
          await this.#insertStepPass(id, pass.id, step.scope);
        }
      }
    }, runLock(runId));
  }

  async steps(runId: number): Promise<StepRow[]> {
    return this.#all(sql`SELECT * FROM steps WHERE run_id = ${runId} ORDER BY position`);
  }

  async step(id: number): Promise<StepRow> {
    const step = await this.#get<StepRow>(sql`SELECT * FROM steps WHERE id = ${id}`);
    if (!step) throw new Error(`step ${id} does not exist`);
    return step;
  }

  async recordStep(id: number, fields: StepFields): Promise<void> {
    await this.#update("steps", id, fields);
  }

  /**
   * Moves a running step on to `phase`, as a compare-and-set on the phase it stood in. A move the
   * phase table refuses is a fault in the workflow, and throws.
   */
  async enterPhase(id: number, phase: StepPhase): Promise<boolean> {
    const step = await this.step(id);
    if (!phaseMoveAllowed(step.phase, phase)) throw new Error(`step ${id} cannot go from phase ${step.phase} to ${phase}`);
    if (step.phase === phase) return true;
    const { changes } = await this.#run(
      sql`UPDATE steps SET phase = ${phase}, updated_at = ${this.#now()} WHERE id = ${id} AND phase = ${step.phase}`,
    );
    return changes > 0;
  }

  /**
   * Moves a step along the step table (src/store/transitions.ts) with `fields`, as a compare-and-set
   * on the state it stood at; false, writing nothing, when the table refuses the event from there.
   * `record`: the step's record for that pass takes the step's new state and these fields with it.
   */
  async moveStep(
    id: number,
    event: StepEvent,
    fields: StepFields & { phase?: StepPhase } = {},
    record?: { passId: number; fields?: StepPassFields },
  ): Promise<boolean> {
    const step = await this.step(id);
    if (fields.phase && !phaseMoveAllowed(step.phase, fields.phase))
      throw new Error(`step ${id} cannot go from phase ${step.phase} to ${fields.phase}`);
    if (!record) return this.#stepTo(step, event, fields);
    return this.#tx(async () => {
      if (!(await this.#stepTo(step, event, fields))) return false;
      const state = nextStepState(step.state, event);
      await this.#run(
        sql`UPDATE step_passes SET ${assignments(definedEntries({ ...record.fields, state }))} WHERE step_id = ${id} AND pass_id = ${record.passId}`,
      );
      return true;
    }, runLock(step.run_id));
  }

  async #stepTo(step: StepRow, event: StepEvent, changes: Record<string, SqlValue | undefined> = {}): Promise<boolean> {
    const to = nextStepState(step.state, event);
    if (!to) return false;
    const result = await this.#run(
      sql`UPDATE steps SET ${assignments(definedEntries({ ...changes, state: to, updated_at: this.#now() }))} WHERE id = ${step.id} AND state = ${step.state}`,
    );
    return result.changes > 0;
  }

  /** The planning step plans again for a later pass. */
  async replanStep(stepId: number, pass: number): Promise<void> {
    await this.#stepTo(await this.step(stepId), "replan", {
      pass,
      phase: "planning",
      error: null,
      iteration_base: await this.#lastIteration(stepId),
    });
  }

  /** A step whose unpushed work was lost starts its sessions again, with a fresh iteration budget. */
  async redoStep(stepId: number): Promise<void> {
    await this.#update("steps", stepId, { phase: "workspace", iteration_base: await this.#lastIteration(stepId) });
  }

  /** A blocked step goes again in the same pass with a fresh iteration budget (`/lisa fix`). */
  async freshBudget(stepId: number): Promise<void> {
    await this.#stepTo(await this.step(stepId), "again", {
      phase: "workspace",
      error: null,
      worktree: null,
      native_worktree: null,
      iteration_base: await this.#lastIteration(stepId),
    });
  }

  async stepPass(stepId: number, passId: number): Promise<StepPassRow | undefined> {
    return this.#get(sql`SELECT * FROM step_passes WHERE step_id = ${stepId} AND pass_id = ${passId}`);
  }

  /** The per-pass records of one pass, with the step each belongs to. */
  async stepPasses(passId: number): Promise<StepPassRow[]> {
    return this.#all(sql`SELECT * FROM step_passes WHERE pass_id = ${passId} ORDER BY step_id`);
  }

  /** Every per-pass record of one step, oldest pass first. */
  async stepHistory(stepId: number): Promise<(StepPassRow & { number: number })[]> {
    return this.#all(
      sql`SELECT sp.*, p.number FROM step_passes sp JOIN passes p ON p.id = sp.pass_id WHERE sp.step_id = ${stepId} ORDER BY p.number`,
    );
  }

  async recordStepPass(id: number, fields: StepPassFields): Promise<void> {
    await this.#update("step_passes", id, fields);
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────────

  async startSession(
    session: Pick<SessionRow, "step_id" | "iteration" | "purpose" | "provider" | "model"> & { pass?: number },
  ): Promise<number> {
    return this.#insert(
      sql`INSERT INTO sessions (step_id, pass, iteration, purpose, provider, model, state, started_at) VALUES (${session.step_id}, ${session.pass ?? (await this.step(session.step_id)).pass}, ${session.iteration}, ${session.purpose}, ${session.provider}, ${session.model}, 'running', ${this.#now()}) RETURNING id`,
    );
  }

  /** Records how a running session ended; one marked interrupted meanwhile (Lisa shutting down) stays so. */
  async finishSession(
    id: number,
    changes: Pick<SessionRow, "state" | "cost_usd" | "turns" | "failure_kind" | "message">,
  ): Promise<void> {
    await this.#run(
      sql`UPDATE sessions SET state = ${changes.state}, cost_usd = ${changes.cost_usd}, turns = ${changes.turns}, failure_kind = ${changes.failure_kind}, message = ${changes.message}, finished_at = ${this.#now()} WHERE id = ${id} AND state = 'running'`,
    );
  }

  async recordSessionPid(id: number, pid: number, identity: string | undefined): Promise<void> {
    await this.#update("sessions", id, { pid, pid_identity: identity ?? null });
  }

  async sessions(stepId: number): Promise<SessionRow[]> {
    return this.#all(sql`SELECT * FROM sessions WHERE step_id = ${stepId} ORDER BY id`);
  }

  /** Agent spend of a run, or of one of its passes. */
  async runCost(runId: number, pass?: number): Promise<number> {
    const ofPass = pass === undefined ? raw("") : sql` AND s.pass = ${pass}`;
    const row = await this.#get<{ total: number | null }>(
      sql`SELECT SUM(s.cost_usd) AS total FROM sessions s JOIN steps t ON s.step_id = t.id WHERE t.run_id = ${runId}${ofPass}`,
    );
    return row?.total ?? 0;
  }

  /** Ends the running sessions of one run as interrupted and returns them (a hand-back or a takeover). */
  async interruptRunSessions(runId: number, message: string): Promise<SessionRow[]> {
    const running = await this.runningSessions(runId);
    for (const session of running) {
      await this.#run(
        sql`UPDATE sessions SET state = 'interrupted', finished_at = ${this.#now()}, message = ${message} WHERE id = ${session.id} AND state = 'running'`,
      );
    }
    return running;
  }

  /** Sessions of a run still running, e.g. to stop them on `/lisa abort`. */
  async runningSessions(runId: number): Promise<SessionRow[]> {
    return this.#all(
      sql`SELECT s.* FROM sessions s JOIN steps t ON s.step_id = t.id WHERE t.run_id = ${runId} AND s.state = 'running'`,
    );
  }

  /**
   * Sessions a dead process left running; they will never report, so they end as interrupted.
   * Returns them, with the process groups their agents ran in.
   */
  async interruptRunningSessions(): Promise<SessionRow[]> {
    const running = await this.#all<SessionRow>(sql`SELECT * FROM sessions WHERE state = 'running'`);
    await this.#run(
      sql`UPDATE sessions SET state = 'interrupted', finished_at = ${this.#now()}, message = 'Lisa stopped during this session' WHERE state = 'running'`,
    );
    return running;
  }

  // ── guidance ────────────────────────────────────────────────────────────────────────────────

  /**
   * One row per delivery and comment. UNIQUE (delivery_id, github_id) cannot see a NULL github_id
   * (a command's or a review body's text), so those are matched on their text too: a command handled
   * again after a crash adds nothing, while the refinements of one continue stay apart.
   */
  async #insertGuidance(runId: number, passId: number | null, item: NewGuidance): Promise<void> {
    await this.#run(sql`INSERT INTO guidance (run_id, pass_id, delivery_id, source, owner, repo, pr_number, author, url, github_id, path, line, diff_hunk, outdated, body, created_at)
       SELECT ${runId}, ${passId}, ${item.delivery_id}, ${item.source}, ${item.owner}, ${item.repo}, ${item.pr_number}, ${item.author}, ${item.url}, ${item.github_id}, ${item.path}, ${item.line}, ${item.diff_hunk}, ${item.outdated}, ${item.body}, ${this.#now()}
       WHERE NOT EXISTS (SELECT 1 FROM guidance WHERE delivery_id = ${item.delivery_id} AND github_id IS NOT DISTINCT FROM ${item.github_id} AND source = ${item.source} AND body = ${item.body})
       ON CONFLICT DO NOTHING`);
  }

  /**
   * Guidance for a pass that has not fixed its plan joins it; otherwise it waits, queued, for the
   * next pass. Returns where it went.
   */
  async addGuidance(runId: number, items: NewGuidance[], joinPass: number | undefined): Promise<void> {
    await this.#tx(async () => {
      for (const item of items) await this.#insertGuidance(runId, joinPass ?? null, item);
    }, runLock(runId));
  }

  async guidanceFor(passId: number): Promise<GuidanceRow[]> {
    return this.#all(sql`SELECT * FROM guidance WHERE pass_id = ${passId} ORDER BY id`);
  }

  /** Guidance waiting for the next pass. */
  async queuedGuidance(runId: number): Promise<GuidanceRow[]> {
    return this.#all(sql`SELECT * FROM guidance WHERE run_id = ${runId} AND pass_id IS NULL ORDER BY id`);
  }

  /** Every guidance item of a run bound to a pass, oldest first: the ledger later passes must keep. */
  async guidanceLedger(runId: number): Promise<(GuidanceRow & { pass: number })[]> {
    return this.#all(
      sql`SELECT g.*, p.number AS pass FROM guidance g JOIN passes p ON p.id = g.pass_id WHERE g.run_id = ${runId} ORDER BY g.id`,
    );
  }

  /** What the agent said it did with a guidance item. */
  async recordGuidanceStatus(id: number, status: GuidanceRow["status"], note: string | null): Promise<void> {
    await this.#update("guidance", id, { status, status_note: note });
  }

  /** Lisa answered the review comment the item came from. */
  async markGuidanceReplied(id: number): Promise<void> {
    await this.#update("guidance", id, { replied: 1 });
  }

  // ── events ──────────────────────────────────────────────────────────────────────────────────

  async #event(
    runId: number,
    pass: number | null,
    kind: string,
    from: string | null,
    to: string | null,
    actor: string | null,
    detail: string | null,
  ): Promise<void> {
    await this.#run(
      sql`INSERT INTO events (run_id, pass, kind, from_state, to_state, actor, detail, created_at) VALUES (${runId}, ${pass}, ${kind}, ${from}, ${to}, ${actor}, ${detail}, ${this.#now()})`,
    );
  }

  /** Logs something that happened to a run without a state change, e.g. a human push or a dropped PR. */
  async addEvent(runId: number, kind: string, detail: { actor?: string; note?: string; pass?: number } = {}): Promise<void> {
    const pass = detail.pass ?? (await this.run(runId))?.current_pass ?? null;
    await this.#event(runId, pass, kind, null, null, detail.actor ?? null, detail.note ?? null);
  }

  async events(runId: number): Promise<EventRow[]> {
    return this.#all(sql`SELECT * FROM events WHERE run_id = ${runId} ORDER BY id`);
  }

  // ── GitHub write pacing ─────────────────────────────────────────────────────────────────────

  /** Takes an installation's next write slot GitHub's limits allow, in one transaction (write-slots.ts). */
  async reserveWriteSlot(request: SlotRequest): Promise<SlotAnswer> {
    return this.#tx(() => reserveWriteSlot(this.#statements(), this.#now(), request), `slots:${request.installationId}`);
  }
}

/** The entries of `changes` that say something: undefined leaves a column as it is. */
const definedEntries = (changes: Record<string, SqlValue | undefined>) =>
  Object.entries(changes).filter((entry): entry is [string, SqlValue] => entry[1] !== undefined);

/** `column = value, …` for an UPDATE: the columns are the store's own names, the values bound. */
const assignments = (entries: readonly [string, SqlValue][]) =>
  join(entries.map(([column, value]) => sql`${raw(column)} = ${value}`));

/** The lock key of a run's rows: its run, passes, steps and guidance. */
const runLock = (runId: number) => `run:${runId}`;
