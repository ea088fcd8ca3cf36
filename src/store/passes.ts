import { decodePass, encodeConfig, encodeFields, type Stored } from "./columns.ts";
import { type Database, runLock } from "./database.ts";
import { insertGuidance, type NewGuidance } from "./guidance.ts";
import type { PassRow, RunRow } from "./rows.ts";
import { transitionRun } from "./run-transition.ts";
import { sql } from "./sql.ts";
import { followStep, insertStep, insertStepPass, lastIteration, type NewStep, stepsOf } from "./steps.ts";
import { nextPassState, nextRunState, type PassEvent, type PassState } from "./transitions.ts";

/** A run's passes: each one round of plan, build and review, along the pass table (transitions.ts). */
export class PassRecords {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async of(runId: number): Promise<PassRow[]> {
    const passes = await this.#db.all<Stored<PassRow>>(sql`SELECT * FROM passes WHERE run_id = ${runId} ORDER BY number`);
    return passes.map(decodePass);
  }

  async get(runId: number, number: number): Promise<PassRow | undefined> {
    const pass = await this.#db.get<Stored<PassRow>>(sql`SELECT * FROM passes WHERE run_id = ${runId} AND number = ${number}`);
    return pass && decodePass(pass);
  }

  async current(runId: number): Promise<PassRow | undefined> {
    const pass = await this.#db.get<Stored<PassRow>>(
      sql`SELECT p.* FROM passes p JOIN runs r ON r.id = p.run_id AND p.number = r.current_pass WHERE r.id = ${runId}`,
    );
    return pass && decodePass(pass);
  }

  /**
   * Starts pass N+1 of a run that may take one (see `RUN_TRANSITIONS.next_pass`): the current pass
   * is superseded, queued guidance and `guidance` are bound to the new pass, and the run is queued.
   * Returns the new pass, or undefined when the run's state refuses it.
   */
  async startNext(
    runId: number,
    next: {
      trigger: PassRow["trigger"];
      requestedBy: string;
      config: unknown;
      guidance: NewGuidance[];
      /** `queued_pass` when the pass under way ends with guidance waiting. */
      event?: "next_pass" | "queued_pass";
    },
  ): Promise<PassRow | undefined> {
    const db = this.#db;
    const event = next.event ?? "next_pass";
    return db.tx(async () => {
      const run = await db.get<Pick<RunRow, "state" | "current_pass">>(
        sql`SELECT state, current_pass FROM runs WHERE id = ${runId}`,
      );
      if (!run || !nextRunState(run.state, event)) return undefined;
      const current = await this.current(runId);
      if (current) await followPass(db, current, "supersede");
      // Blocked steps of a superseded pass are skipped; the new pass plans afresh.
      for (const step of await stepsOf(db, runId)) {
        if (step.state === "blocked" || step.state === "pending" || step.state === "running") await followStep(db, step, "skip");
      }
      const number = run.current_pass + 1;
      const passId = await insertPass(db, runId, {
        number,
        trigger: next.trigger,
        requestedBy: next.requestedBy,
        config: next.config,
      });
      await db.run(sql`UPDATE runs SET current_pass = ${number} WHERE id = ${runId}`);
      for (const item of next.guidance) await insertGuidance(db, runId, null, item);
      await db.run(sql`UPDATE guidance SET pass_id = ${passId} WHERE run_id = ${runId} AND pass_id IS NULL`);
      if (!(await transitionRun(db, runId, event, { actor: next.requestedBy, note: next.trigger }))) {
        throw new Error(`run ${runId} could not start pass ${number}`);
      }
      return this.get(runId, number);
    }, runLock(runId));
  }

  /** Moves a pass along the pass table; false when the table refuses the event from its state. */
  async transition(passId: number, event: PassEvent): Promise<boolean> {
    const pass = await this.#db.get<PassMoving>(sql`SELECT * FROM passes WHERE id = ${passId}`);
    return pass ? await movePass(this.#db, pass, event) : false;
  }

  /** See followPass: a pass moved along with its run's change, when the pass table allows it. */
  async follow(passId: number, event: PassEvent): Promise<void> {
    const pass = await this.#db.get<PassMoving>(sql`SELECT * FROM passes WHERE id = ${passId}`);
    if (pass) await followPass(this.#db, pass, event);
  }

  /** The configuration a later pass runs with: the default branch's when it started. */
  async recordConfig(passId: number, config: unknown): Promise<void> {
    await this.#db.update("passes", passId, { config: encodeConfig(config) });
  }

  /**
   * The pass reaches its review gate with what its agents recommend (`outcome`, written only when
   * the pass is ascending); part of the run's change `openGate`, whose compare-and-set decides.
   */
  async reachGate(passId: number, outcome: PassOutcome): Promise<void> {
    const pass = await this.#db.get<PassMoving>(sql`SELECT * FROM passes WHERE id = ${passId}`);
    if (pass?.state !== "ascending") return;
    await followPass(this.#db, pass, "gate_open");
    await this.#db.update("passes", passId, encodeFields(outcome));
  }

  /**
   * Fixes a pass's plan: steps it names that exist are reset for this pass with their new scope,
   * new repositories get new steps, and every other step is left unchanged.
   */
  async recordPlan(
    runId: number,
    passNumber: number,
    plan: unknown,
    steps: (NewStep & { followUpOf?: number })[],
  ): Promise<void> {
    const db = this.#db;
    await db.tx(async () => {
      const pass = await this.get(runId, passNumber);
      if (!pass) throw new Error(`run ${runId} has no pass ${passNumber}`);
      await db.update("passes", pass.id, { plan: JSON.stringify(plan) });
      if (passNumber === 1) await db.update("runs", runId, { plan: JSON.stringify(plan) });
      const existing = await stepsOf(db, runId);
      const same = (a: { owner: string; repo: string }, b: { owner: string; repo: string }) =>
        a.owner.toLowerCase() === b.owner.toLowerCase() && a.repo.toLowerCase() === b.repo.toLowerCase();
      // A later plan of the same pass (guidance came while planning) may leave out steps the first
      // one named; those that have not started are taken back.
      for (const step of existing) {
        if (step.position === 0 || step.pass !== passNumber || step.state !== "pending") continue;
        if (steps.some((named) => same(named, step))) continue;
        await db.run(sql`DELETE FROM step_passes WHERE step_id = ${step.id} AND pass_id = ${pass.id}`);
        const sessions = await db.get(sql`SELECT 1 FROM sessions WHERE step_id = ${step.id} LIMIT 1`);
        if (step.pr_number === null && !sessions) await db.run(sql`DELETE FROM steps WHERE id = ${step.id}`);
        else await followStep(db, step, "set_aside");
      }
      for (const step of steps) {
        const found = existing.find((s) => s.position > 0 && same(s, step) && s.pr_state !== "merged" && s.pr_state !== "closed");
        if (found && found.pass === passNumber) {
          await insertStepPass(db, found.id, pass.id, step.scope);
          continue;
        }
        if (found) {
          await followStep(db, found, "replan", {
            pass: passNumber,
            scope: step.scope,
            phase: "workspace",
            start_sha: null,
            worktree: null,
            native_worktree: null,
            error: null,
            iteration_base: await lastIteration(db, found.id),
          });
          await insertStepPass(db, found.id, pass.id, step.scope);
        } else {
          const taken = await db.get<{ last: number | null }>(
            sql`SELECT MAX(position) AS last FROM steps WHERE run_id = ${runId}`,
          );
          const position = passNumber === 1 ? step.position : (taken?.last ?? 0) + 1;
          // Work in a repository whose PR was merged goes to a follow-up branch, never the merged one.
          const merged = existing.some((s) => s.pr_state === "merged" && same(s, step));
          const branch = merged ? `${step.branch.replace(/-p\d+$/, "")}-p${passNumber}` : step.branch;
          const id = await insertStep(db, runId, { ...step, branch, position }, passNumber);
          await insertStepPass(db, id, pass.id, step.scope);
        }
      }
    }, runLock(runId));
  }
}

/** Moves `pass` along the pass table, as a compare-and-set on the state it stood at. */
export async function movePass(db: Database, pass: PassMoving, event: PassEvent): Promise<boolean> {
  const to = nextPassState(pass.state, event);
  return to ? (await db.run(passMove(db, pass, event, to))).changes > 0 : false;
}

/**
 * Moves `pass` along with a change of its run when the pass table allows it from where the pass
 * stands; a pass already past it stays where it is. No result: the run's compare-and-set decides
 * the change (run-changes.ts), never its pass's.
 */
export async function followPass(db: Database, pass: PassMoving, event: PassEvent): Promise<void> {
  const to = nextPassState(pass.state, event);
  if (to) await db.run(passMove(db, pass, event, to));
}

type PassMoving = Pick<PassRow, "id" | "state" | "started_at">;

/** What a pass's agents said at its gate. */
export type PassOutcome = Pick<PassRow, "recommendation" | "refinements" | "open_questions">;

function passMove(db: Database, pass: PassMoving, event: PassEvent, to: PassState) {
  const now = db.now();
  const started = event === "start" ? now : pass.started_at;
  const finished = ["superseded", "aborted", "accepted", "at_gate"].includes(to) ? now : null;
  return sql`UPDATE passes SET state = ${to}, started_at = ${started}, finished_at = ${finished} WHERE id = ${pass.id} AND state = ${pass.state}`;
}

export async function insertPass(
  db: Database,
  runId: number,
  pass: { number: number; trigger: PassRow["trigger"]; requestedBy: string; config: unknown },
): Promise<number> {
  return db.insert(
    sql`INSERT INTO passes (run_id, number, trigger, requested_by, state, config) VALUES (${runId}, ${pass.number}, ${pass.trigger}, ${pass.requestedBy}, 'queued', ${encodeConfig(pass.config)}) RETURNING id`,
  );
}
