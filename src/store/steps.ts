import { decodeStep, decodeStepPass, encodeFields, type Stored } from "./columns.ts";
import { assignments, type Database, definedEntries, runLock } from "./database.ts";
import type { RunRow, StepPassRow, StepRow } from "./rows.ts";
import { readRun } from "./run-transition.ts";
import { sql } from "./sql.ts";
import { nextStepState, phaseMoveAllowed, type StepEvent, type StepPhase, type StepState } from "./transitions.ts";

export interface NewStep {
  position: number;
  owner: string;
  repo: string;
  branch: string;
  baseBranch: string | null;
  scope: string | null;
}

/** What the workflow records on a step; its state and phase change only through move and enterPhase. */
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
    | "ci_failure"
    | "pr_number"
    | "pr_url"
    | "pr_state"
    | "head_sha"
    | "draft"
    | "gate"
    | "error"
  >
>;

/** What the workflow records on a step's record for a pass; its state follows the step's (move). */
export type StepPassFields = Partial<Omit<StepPassRow, "id" | "step_id" | "pass_id" | "state">>;

/**
 * A run's steps, one per repository (position 0 plans), with their record for each pass. A step's
 * state moves along the step table and its phase along the phase table (transitions.ts).
 */
export class StepRecords {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async of(runId: number): Promise<StepRow[]> {
    return stepsOf(this.#db, runId);
  }

  async get(id: number): Promise<StepRow> {
    const step = await this.#db.get<Stored<StepRow>>(sql`SELECT * FROM steps WHERE id = ${id}`);
    if (!step) throw new Error(`step ${id} does not exist`);
    return decodeStep(step);
  }

  /** The run and step whose pull request this is, when it is one of Lisa's. */
  async byPullRequest(owner: string, repo: string, pr: number): Promise<{ run: RunRow; step: StepRow } | undefined> {
    const step = await this.#db.get<Stored<StepRow>>(
      sql`SELECT * FROM steps WHERE lower(owner) = lower(${owner}) AND lower(repo) = lower(${repo}) AND pr_number = ${pr} ORDER BY id DESC LIMIT 1`,
    );
    const run = step && (await readRun(this.#db, step.run_id));
    return run && step ? { run, step: decodeStep(step) } : undefined;
  }

  async record(id: number, fields: StepFields): Promise<void> {
    await this.#db.update("steps", id, encodeFields(fields));
  }

  /**
   * Moves a running step on to `phase`, as a compare-and-set on the phase it stood in. A move the
   * phase table refuses is a fault in the workflow, and throws. No result: only the worker running
   * the step moves its phase, and the compare-and-set only keeps a stale read from writing over it.
   */
  async enterPhase(id: number, phase: StepPhase): Promise<void> {
    const step = await this.get(id);
    if (!phaseMoveAllowed(step.phase, phase)) throw new Error(`step ${id} cannot go from phase ${step.phase} to ${phase}`);
    if (step.phase === phase) return;
    await this.#db.run(
      sql`UPDATE steps SET phase = ${phase}, updated_at = ${this.#db.now()} WHERE id = ${id} AND phase = ${step.phase}`,
    );
  }

  /**
   * Moves a step along the step table with `fields`, as a compare-and-set on the state it stood at;
   * false, writing nothing, when the table refuses the event from there. `record`: the step's record
   * for that pass takes the step's new state and these fields with it.
   */
  async move(
    id: number,
    event: StepEvent,
    fields: StepFields & { phase?: StepPhase } = {},
    record?: { passId: number; fields?: StepPassFields },
  ): Promise<boolean> {
    const step = await this.get(id);
    if (fields.phase && !phaseMoveAllowed(step.phase, fields.phase))
      throw new Error(`step ${id} cannot go from phase ${step.phase} to ${fields.phase}`);
    if (!record) return moveStep(this.#db, step, event, fields);
    return this.#db.tx(async () => {
      if (!(await moveStep(this.#db, step, event, fields))) return false;
      const state = nextStepState(step.state, event);
      await this.#db.run(
        sql`UPDATE step_passes SET ${assignments(definedEntries({ ...encodeFields(record.fields ?? {}), state }))} WHERE step_id = ${id} AND pass_id = ${record.passId}`,
      );
      return true;
    }, runLock(step.run_id));
  }

  /** See followStep: a step moved along with its run's change, when the step table allows it. */
  async follow(id: number, event: StepEvent, fields: StepFields = {}): Promise<void> {
    await followStep(this.#db, await this.get(id), event, fields);
  }

  /** The planning step plans again for a later pass, with its run's change (followStep). */
  async replan(stepId: number, pass: number): Promise<void> {
    await followStep(this.#db, await this.get(stepId), "replan", {
      pass,
      phase: "planning",
      error: null,
      iteration_base: await lastIteration(this.#db, stepId),
    });
  }

  /** A step whose unpushed work was lost starts its sessions again, with a fresh iteration budget. */
  async redo(stepId: number): Promise<void> {
    await this.#db.update("steps", stepId, { phase: "workspace", iteration_base: await lastIteration(this.#db, stepId) });
  }

  /** A blocked step goes again in the same pass with a fresh iteration budget (`/lisa fix`), with its run's change (followStep). */
  async freshBudget(stepId: number): Promise<void> {
    await followStep(this.#db, await this.get(stepId), "again", {
      phase: "workspace",
      error: null,
      worktree: null,
      native_worktree: null,
      iteration_base: await lastIteration(this.#db, stepId),
    });
  }

  /** The step's record for one pass. */
  async inPass(stepId: number, passId: number): Promise<StepPassRow | undefined> {
    const record = await this.#db.get<Stored<StepPassRow>>(
      sql`SELECT * FROM step_passes WHERE step_id = ${stepId} AND pass_id = ${passId}`,
    );
    return record && decodeStepPass(record);
  }

  /** The records of one pass, with the step each belongs to. */
  async allInPass(passId: number): Promise<StepPassRow[]> {
    const records = await this.#db.all<Stored<StepPassRow>>(
      sql`SELECT * FROM step_passes WHERE pass_id = ${passId} ORDER BY step_id`,
    );
    return records.map(decodeStepPass);
  }

  /** Every record of one step, oldest pass first. */
  async history(stepId: number): Promise<(StepPassRow & { number: number })[]> {
    const records = await this.#db.all<Stored<StepPassRow & { number: number }>>(
      sql`SELECT sp.*, p.number FROM step_passes sp JOIN passes p ON p.id = sp.pass_id WHERE sp.step_id = ${stepId} ORDER BY p.number`,
    );
    return records.map(decodeStepPass);
  }

  async recordInPass(id: number, fields: StepPassFields): Promise<void> {
    await this.#db.update("step_passes", id, encodeFields(fields));
  }
}

/** Moves `step` along the step table with `changes`, as a compare-and-set on the state it stood at. */
export async function moveStep(db: Database, step: StepRow, event: StepEvent, changes: Partial<StepRow> = {}): Promise<boolean> {
  const to = nextStepState(step.state, event);
  return to ? (await db.run(stepMove(db, step, to, changes))).changes > 0 : false;
}

/**
 * Moves `step` along with a change of its run when the step table allows it from where the step
 * stands; a step already past it stays where it is. No result: the run's compare-and-set decides
 * the change (run-changes.ts), never a step's.
 */
export async function followStep(db: Database, step: StepRow, event: StepEvent, changes: Partial<StepRow> = {}): Promise<void> {
  const to = nextStepState(step.state, event);
  if (to) await db.run(stepMove(db, step, to, changes));
}

const stepMove = (db: Database, step: StepRow, to: StepState, changes: Partial<StepRow>) =>
  sql`UPDATE steps SET ${assignments(definedEntries({ ...encodeFields(changes), state: to, updated_at: db.now() }))} WHERE id = ${step.id} AND state = ${step.state}`;

export async function insertStep(db: Database, runId: number, step: NewStep, pass: number): Promise<number> {
  const now = db.now();
  return db.insert(sql`INSERT INTO steps (run_id, position, owner, repo, base_branch, branch, scope, pass, state, phase, created_at, updated_at)
     VALUES (${runId}, ${step.position}, ${step.owner}, ${step.repo}, ${step.baseBranch}, ${step.branch}, ${step.scope}, ${pass}, 'pending', ${step.position === 0 ? "planning" : "workspace"}, ${now}, ${now}) RETURNING id`);
}

/** The run's steps in plan order. */
export async function stepsOf(db: Database, runId: number): Promise<StepRow[]> {
  const steps = await db.all<Stored<StepRow>>(sql`SELECT * FROM steps WHERE run_id = ${runId} ORDER BY position`);
  return steps.map(decodeStep);
}

/** The step takes part in a pass: its record for it. */
export async function insertStepPass(db: Database, stepId: number, passId: number, scope: string | null): Promise<void> {
  await db.run(
    sql`INSERT INTO step_passes (step_id, pass_id, state, scope) VALUES (${stepId}, ${passId}, 'pending', ${scope}) ON CONFLICT DO NOTHING`,
  );
}

/** The step's last session's iteration: sessions up to it belong to earlier tries or passes. */
export async function lastIteration(db: Database, stepId: number): Promise<number> {
  return (
    (await db.get<{ last: number | null }>(sql`SELECT MAX(iteration) AS last FROM sessions WHERE step_id = ${stepId}`))?.last ?? 0
  );
}
