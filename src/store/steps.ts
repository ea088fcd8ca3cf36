import { assignments, type Database, definedEntries, runLock } from "./database.ts";
import type { RunRow, StepPassRow, StepRow } from "./rows.ts";
import { sql } from "./sql.ts";
import type { SqlValue } from "./sql-driver.ts";
import { nextStepState, phaseMoveAllowed, type StepEvent, type StepPhase } from "./transitions.ts";

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
    return this.#db.all(sql`SELECT * FROM steps WHERE run_id = ${runId} ORDER BY position`);
  }

  async get(id: number): Promise<StepRow> {
    const step = await this.#db.get<StepRow>(sql`SELECT * FROM steps WHERE id = ${id}`);
    if (!step) throw new Error(`step ${id} does not exist`);
    return step;
  }

  /** The run and step whose pull request this is, when it is one of Lisa's. */
  async byPullRequest(owner: string, repo: string, pr: number): Promise<{ run: RunRow; step: StepRow } | undefined> {
    const step = await this.#db.get<StepRow>(
      sql`SELECT * FROM steps WHERE lower(owner) = lower(${owner}) AND lower(repo) = lower(${repo}) AND pr_number = ${pr} ORDER BY id DESC LIMIT 1`,
    );
    const run = step && (await this.#db.get<RunRow>(sql`SELECT * FROM runs WHERE id = ${step.run_id}`));
    return run && step ? { run, step } : undefined;
  }

  async record(id: number, fields: StepFields): Promise<void> {
    await this.#db.update("steps", id, fields);
  }

  /**
   * Moves a running step on to `phase`, as a compare-and-set on the phase it stood in. A move the
   * phase table refuses is a fault in the workflow, and throws.
   */
  async enterPhase(id: number, phase: StepPhase): Promise<boolean> {
    const step = await this.get(id);
    if (!phaseMoveAllowed(step.phase, phase)) throw new Error(`step ${id} cannot go from phase ${step.phase} to ${phase}`);
    if (step.phase === phase) return true;
    const { changes } = await this.#db.run(
      sql`UPDATE steps SET phase = ${phase}, updated_at = ${this.#db.now()} WHERE id = ${id} AND phase = ${step.phase}`,
    );
    return changes > 0;
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
        sql`UPDATE step_passes SET ${assignments(definedEntries({ ...record.fields, state }))} WHERE step_id = ${id} AND pass_id = ${record.passId}`,
      );
      return true;
    }, runLock(step.run_id));
  }

  /** The planning step plans again for a later pass. */
  async replan(stepId: number, pass: number): Promise<void> {
    await moveStep(this.#db, await this.get(stepId), "replan", {
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

  /** A blocked step goes again in the same pass with a fresh iteration budget (`/lisa fix`). */
  async freshBudget(stepId: number): Promise<void> {
    await moveStep(this.#db, await this.get(stepId), "again", {
      phase: "workspace",
      error: null,
      worktree: null,
      native_worktree: null,
      iteration_base: await lastIteration(this.#db, stepId),
    });
  }

  /** The step's record for one pass. */
  async inPass(stepId: number, passId: number): Promise<StepPassRow | undefined> {
    return this.#db.get(sql`SELECT * FROM step_passes WHERE step_id = ${stepId} AND pass_id = ${passId}`);
  }

  /** The records of one pass, with the step each belongs to. */
  async allInPass(passId: number): Promise<StepPassRow[]> {
    return this.#db.all(sql`SELECT * FROM step_passes WHERE pass_id = ${passId} ORDER BY step_id`);
  }

  /** Every record of one step, oldest pass first. */
  async history(stepId: number): Promise<(StepPassRow & { number: number })[]> {
    return this.#db.all(
      sql`SELECT sp.*, p.number FROM step_passes sp JOIN passes p ON p.id = sp.pass_id WHERE sp.step_id = ${stepId} ORDER BY p.number`,
    );
  }

  async recordInPass(id: number, fields: StepPassFields): Promise<void> {
    await this.#db.update("step_passes", id, fields);
  }
}

/** Moves `step` along the step table with `changes`, as a compare-and-set on the state it stood at. */
export async function moveStep(
  db: Database,
  step: StepRow,
  event: StepEvent,
  changes: Record<string, SqlValue | undefined> = {},
): Promise<boolean> {
  const to = nextStepState(step.state, event);
  if (!to) return false;
  const result = await db.run(
    sql`UPDATE steps SET ${assignments(definedEntries({ ...changes, state: to, updated_at: db.now() }))} WHERE id = ${step.id} AND state = ${step.state}`,
  );
  return result.changes > 0;
}

export async function insertStep(db: Database, runId: number, step: NewStep, pass: number): Promise<number> {
  const now = db.now();
  return db.insert(sql`INSERT INTO steps (run_id, position, owner, repo, base_branch, branch, scope, pass, state, phase, created_at, updated_at)
     VALUES (${runId}, ${step.position}, ${step.owner}, ${step.repo}, ${step.baseBranch}, ${step.branch}, ${step.scope}, ${pass}, 'pending', ${step.position === 0 ? "planning" : "workspace"}, ${now}, ${now}) RETURNING id`);
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
