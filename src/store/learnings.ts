import type { Database } from "./database.ts";
import { sql } from "./sql.ts";

/** How the anchor check shows among the gates (and as a reflection's gate): it is Lisa's, not a command of the repository. */
export const ANCHOR_CHECK = "Lisa's anchor check";

/** The agent's reflection on one gate failure it was sent back for, with Lisa's signature of that failure. */
export interface ReflectionRow {
  id: number;
  step_id: number;
  pass: number;
  /** The session that wrote it. */
  iteration: number;
  gate: string;
  /** Lisa's normalized fingerprint of the failure (reflection.ts), never the agent's words. */
  signature: string;
  what_failed: string;
  cause: string;
  change: string;
  created_at: number;
}

export type NewReflection = Omit<ReflectionRow, "id" | "created_at">;

/** What a delivered pass proved: a gate command that passed, or a test file the agent added or changed. */
export interface AnchorRow {
  id: number;
  step_id: number;
  /** The pass that set it. */
  pass: number;
  kind: "gate" | "test" | "judge";
  value: string;
}

/** The pull request of its own through which an accepted run proposed its learnings to one repository's memory file. */
export interface MemoryPullRow {
  id: number;
  run_id: number;
  owner: string;
  repo: string;
  branch: string;
  pr_number: number;
  pr_url: string;
}

/** What Lisa learns within a run (docs/operations.md, What Lisa learns): reflections on failures, and the anchors later passes must keep. */
export class LearningRecords {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async addReflection(item: NewReflection): Promise<void> {
    await this.#db.run(
      sql`INSERT INTO reflections (step_id, pass, iteration, gate, signature, what_failed, cause, change, created_at) VALUES (${item.step_id}, ${item.pass}, ${item.iteration}, ${item.gate}, ${item.signature}, ${item.what_failed}, ${item.cause}, ${item.change}, ${this.#db.now()})`,
    );
  }

  /** A step's reflections in one pass, in the order they were written. */
  async reflections(stepId: number, pass: number): Promise<ReflectionRow[]> {
    return this.#db.all(sql`SELECT * FROM reflections WHERE step_id = ${stepId} AND pass = ${pass} ORDER BY iteration, id`);
  }

  /** Keeps the anchors a delivered pass set; one already held keeps the pass that set it first. */
  async addAnchors(stepId: number, pass: number, anchors: Pick<AnchorRow, "kind" | "value">[]): Promise<void> {
    await this.#db.tx(async () => {
      for (const anchor of anchors) {
        const held = await this.#db.get(
          sql`SELECT id FROM anchors WHERE step_id = ${stepId} AND kind = ${anchor.kind} AND value = ${anchor.value}`,
        );
        if (!held)
          await this.#db.run(
            sql`INSERT INTO anchors (step_id, pass, kind, value) VALUES (${stepId}, ${pass}, ${anchor.kind}, ${anchor.value})`,
          );
      }
    });
  }

  /** The anchors set by passes before `pass`. */
  async anchorsBefore(stepId: number, pass: number): Promise<AnchorRow[]> {
    return this.#db.all(sql`SELECT * FROM anchors WHERE step_id = ${stepId} AND pass < ${pass} ORDER BY id`);
  }

  /** Keeps the memory pull request of a run in a repository; one recorded already (a restart's) stays. */
  async recordMemoryPull(pull: Omit<MemoryPullRow, "id">): Promise<void> {
    await this.#db.tx(async () => {
      const held = await this.#db.get(
        sql`SELECT id FROM memory_pulls WHERE run_id = ${pull.run_id} AND owner = ${pull.owner} AND repo = ${pull.repo}`,
      );
      if (!held)
        await this.#db.run(
          sql`INSERT INTO memory_pulls (run_id, owner, repo, branch, pr_number, pr_url) VALUES (${pull.run_id}, ${pull.owner}, ${pull.repo}, ${pull.branch}, ${pull.pr_number}, ${pull.pr_url})`,
        );
    });
  }

  /** The memory pull requests a run opened, in the order it opened them. */
  async memoryPulls(runId: number): Promise<MemoryPullRow[]> {
    return this.#db.all(sql`SELECT * FROM memory_pulls WHERE run_id = ${runId} ORDER BY id`);
  }
}
