import { decodeRun, encodeConfig, type Stored } from "./columns.ts";
import { type Database, runLock } from "./database.ts";
import { logEvent } from "./events.ts";
import { followPass, insertPass } from "./passes.ts";
import type { PassRow, RunRow, RunState } from "./rows.ts";
import { type RunStateFields, readRun, transitionRun } from "./run-transition.ts";
import { interruptRunSessions } from "./sessions.ts";
import { join, raw, sql } from "./sql.ts";
import { followStep, insertStep, insertStepPass, lastIteration, type NewStep, stepsOf } from "./steps.ts";
import type { RunEvent } from "./transitions.ts";

export type NewRun = Pick<
  RunRow,
  "installation_id" | "owner" | "repo" | "issue_number" | "issue_title" | "issue_body" | "requested_by" | "config"
> & {
  /** The webhook delivery whose command creates the run, kept on its `run_created` event (createdBy). */
  delivery?: string;
};

/** Runs, one per labelled issue at a time, along the run table (transitions.ts). */
export class RunRecords {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * Creates a queued run with its first pass and first steps (the planning step, or the single
   * repository's step), or returns undefined when the issue already has an open run.
   */
  async create(run: NewRun, steps: NewStep[]): Promise<RunRow | undefined> {
    const db = this.#db;
    try {
      return await db.tx(async () => {
        const now = db.now();
        const id =
          await db.insert(sql`INSERT INTO runs (installation_id, owner, repo, issue_number, issue_title, issue_body, requested_by, config, state, created_at, updated_at)
           VALUES (${run.installation_id}, ${run.owner}, ${run.repo}, ${run.issue_number}, ${run.issue_title}, ${run.issue_body}, ${run.requested_by}, ${encodeConfig(run.config)}, 'queued', ${now}, ${now}) RETURNING id`);
        const passId = await insertPass(db, id, {
          number: 1,
          trigger: "initial",
          requestedBy: run.requested_by,
          config: run.config,
        });
        for (const step of steps) {
          const stepId = await insertStep(db, id, step, 1);
          if (step.position > 0) await insertStepPass(db, stepId, passId, step.scope);
        }
        const detail = run.delivery === undefined ? null : `delivery ${run.delivery}`;
        await logEvent(db, { runId: id, pass: 1, kind: "run_created", to: "queued", actor: run.requested_by, detail });
        return this.get(id);
      });
    } catch (error) {
      if (db.driver.isUniqueViolation(error)) return undefined;
      throw error;
    }
  }

  async get(id: number): Promise<RunRow | undefined> {
    return readRun(this.#db, id);
  }

  /** The issue's most recent run, whatever its state. */
  async latestFor(owner: string, repo: string, issue: number): Promise<RunRow | undefined> {
    const run = await this.#db.get<Stored<RunRow>>(
      sql`SELECT * FROM runs WHERE lower(owner) = lower(${owner}) AND lower(repo) = lower(${repo}) AND issue_number = ${issue} ORDER BY id DESC LIMIT 1`,
    );
    return run && decodeRun(run);
  }

  /** Runs whose tracking comment GitHub refused to bring up to date. */
  async owingTracking(): Promise<RunRow[]> {
    return (await this.#db.all<Stored<RunRow>>(sql`SELECT * FROM runs WHERE tracking_owed = 1 ORDER BY id`)).map(decodeRun);
  }

  async inState(...states: RunState[]): Promise<RunRow[]> {
    const runs = await this.#db.all<Stored<RunRow>>(
      sql`SELECT * FROM runs WHERE state IN (${join(states.map((state) => sql`${state}`))}) ORDER BY id`,
    );
    return runs.map(decodeRun);
  }

  /** How many runs are in each state. */
  async countByState(): Promise<{ state: RunState; n: number }[]> {
    return this.#db.all(sql`SELECT state, COUNT(*) AS n FROM runs GROUP BY state ORDER BY state`);
  }

  /** Whether a run of the issue moved into a state other than queued or running in (`from`, `to`]. */
  async cameToRest(owner: string, repo: string, issue: number, from: number, to: number): Promise<boolean> {
    const found = await this.#db.get(sql`SELECT 1 FROM events e JOIN runs r ON r.id = e.run_id
       WHERE r.owner = ${owner} AND r.repo = ${repo} AND r.issue_number = ${issue} AND e.to_state NOT IN ('queued', 'running')
         AND e.created_at > ${from} AND e.created_at <= ${to} LIMIT 1`);
    return found !== undefined;
  }

  /** Agent spend of a run, or of one of its passes; only its sessions of one purpose (`judge`) when given. */
  async cost(runId: number, pass?: number, purpose?: string): Promise<number> {
    const ofPass = pass === undefined ? raw("") : sql` AND s.pass = ${pass}`;
    const ofPurpose = purpose === undefined ? raw("") : sql` AND s.purpose = ${purpose}`;
    const row = await this.#db.get<{ total: number | null }>(
      sql`SELECT SUM(s.cost_usd) AS total FROM sessions s JOIN steps t ON s.step_id = t.id WHERE t.run_id = ${runId}${ofPass}${ofPurpose}`,
    );
    return row?.total ?? 0;
  }

  /** Marks a queued run running for `worker`: run `runId`, or the oldest queued one. */
  async claim(worker: string, runId?: number): Promise<RunRow | undefined> {
    const queued = runId === undefined ? await this.inState("queued") : [await this.get(runId)];
    for (const run of queued) {
      if (run?.state !== "queued") continue;
      const claimed = await this.#db.tx(async () => {
        if (!(await this.transition(run.id, "claim"))) return undefined;
        await this.#db.update("runs", run.id, { worker });
        return this.get(run.id);
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
  async takeOver(runId: number, note: string): Promise<RunRow | undefined> {
    const db = this.#db;
    return db.tx(async () => {
      const run = await this.get(runId);
      if (run?.state !== "running") return undefined;
      await interruptRunSessions(db, runId, note);
      await logEvent(db, { runId, pass: run.current_pass, kind: "taken_over", actor: null, detail: note });
      return this.transition(runId, "interrupt", { note }, { restart: true });
    }, runLock(runId));
  }

  /** The webhook delivery whose command created the run, when it was recorded. */
  async createdBy(runId: number): Promise<string | undefined> {
    const event = await this.#db.get<{ detail: string | null }>(
      sql`SELECT detail FROM events WHERE run_id = ${runId} AND kind = 'run_created' ORDER BY id LIMIT 1`,
    );
    return event?.detail?.startsWith("delivery ") ? event.detail.slice("delivery ".length) : undefined;
  }

  /** See transitionRun (run-transition.ts). */
  transition(runId: number, event: RunEvent, detail: { actor?: string; note?: string } = {}, fields: RunStateFields = {}) {
    return transitionRun(this.#db, runId, event, detail, fields);
  }

  /**
   * Accepts a run in review (or stopped): the run, its current pass and the pass's decision in one
   * transaction, so what the final report says of who accepted it is durable before any of it is
   * published. Undefined when the run's state refuses it.
   */
  async accept(runId: number, decision: { by: string; via: "approval" | "override" }): Promise<RunRow | undefined> {
    const db = this.#db;
    return db.tx(async () => {
      const note = decision.via === "override" ? "/lisa accept" : undefined;
      const run = await this.transition(runId, "accept", { actor: decision.by, ...(note ? { note } : {}) });
      const pass =
        run &&
        (await db.get<Pick<PassRow, "id" | "state" | "started_at">>(
          sql`SELECT id, state, started_at FROM passes WHERE run_id = ${runId} AND number = ${run.current_pass}`,
        ));
      if (!run || !pass) return run;
      await followPass(db, pass, "accept");
      await db.update("passes", pass.id, {
        decision: "accept",
        decided_by: decision.by,
        decided_via: note ?? "approval",
        decided_at: db.now(),
      });
      return run;
    }, runLock(runId));
  }

  /**
   * Queues a failed run again: its failed steps go back to pending with a fresh iteration budget,
   * finished steps stay finished. The config is the one read from the default branch now.
   */
  async retry(runId: number, config: unknown, actor: string): Promise<RunRow | undefined> {
    const db = this.#db;
    return db.tx(async () => {
      const run = await this.get(runId);
      if (run?.state !== "failed") return undefined;
      for (const step of await stepsOf(db, runId)) {
        if (step.state === "failed")
          await followStep(db, step, "again", { error: null, iteration_base: await lastIteration(db, step.id) });
      }
      await db.run(
        sql`UPDATE passes SET config = ${encodeConfig(config)} WHERE run_id = ${runId} AND number = ${run.current_pass}`,
      );
      await db.update("runs", runId, { error: null, restarts: 0, config: encodeConfig(config) });
      return this.transition(runId, "retry", { actor });
    }, runLock(runId));
  }

  /** The id of the run's last state change, which its GitHub side must show (see markPublished). */
  async lastTransition(runId: number): Promise<number> {
    const row = await this.#db.get<{ id: number | null }>(
      sql`SELECT MAX(id) AS id FROM events WHERE run_id = ${runId} AND to_state IS NOT NULL`,
    );
    return row?.id ?? 0;
  }

  /** Records that GitHub shows the run as it stood at state change `eventId` (labels, report, merge, checks). */
  async markPublished(runId: number, eventId: number): Promise<void> {
    await this.#db.run(
      sql`UPDATE runs SET published_event = ${eventId} WHERE id = ${runId} AND (published_event IS NULL OR published_event < ${eventId})`,
    );
  }

  /**
   * Runs at rest (not queued or running: an executing run publishes its own way) whose last state
   * change GitHub does not show yet: Lisa stopped, or GitHub failed, between the two.
   */
  async behindOnGitHub(): Promise<(RunRow & { changed_at: number })[]> {
    const runs = await this.#db.all<
      Stored<RunRow & { changed_at: number }>
    >(sql`SELECT runs.*, last.id AS last_event, last.created_at AS changed_at FROM runs
         JOIN events last ON last.id = (SELECT MAX(id) FROM events WHERE events.run_id = runs.id AND to_state IS NOT NULL)
       WHERE runs.state NOT IN ('queued', 'running') AND COALESCE(runs.published_event, 0) < last.id ORDER BY runs.id`);
    return runs.map(decodeRun);
  }

  /** The issue comment that tracks the run, once written. */
  async recordTrackingComment(runId: number, commentId: number): Promise<void> {
    await this.#db.update("runs", runId, { comment_id: commentId });
  }

  /** Whether the tracking comment owes an edit GitHub refused, so any worker writes it later. */
  async oweTracking(runId: number, owed: boolean): Promise<void> {
    await this.#db.update("runs", runId, { tracking_owed: owed ? 1 : 0 });
  }

  /** The issue comment with the run's final report, once written. */
  async recordReportComment(runId: number, commentId: number): Promise<void> {
    await this.#db.update("runs", runId, { report_comment_id: commentId });
  }
}
