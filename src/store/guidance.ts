import { type Database, runLock } from "./database.ts";
import type { GuidanceRow } from "./rows.ts";
import { sql } from "./sql.ts";

export type NewGuidance = Omit<GuidanceRow, "id" | "run_id" | "pass_id" | "status" | "status_note" | "replied" | "created_at">;

/** What reviewers asked of a run: each item bound to the pass that takes it up, or queued for the next. */
export class GuidanceRecords {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Guidance for a pass that has not fixed its plan joins it (`joinPass`); otherwise it waits, queued, for the next pass. */
  async add(runId: number, items: NewGuidance[], joinPass: number | undefined): Promise<void> {
    await this.#db.tx(async () => {
      for (const item of items) await insertGuidance(this.#db, runId, joinPass ?? null, item);
    }, runLock(runId));
  }

  /**
   * Binds guidance to the pass under way when an agent session of one of its build steps runs now,
   * for that session to take up (steering); returns the providers of those sessions, or nothing
   * (and stores nothing) when none runs, or when an item is not for it: said on another repository's
   * PR (a step already built in this pass would never see it), or the agent's own refinements.
   */
  async steer(runId: number, pass: { id: number; number: number }, items: NewGuidance[]): Promise<string[]> {
    return this.#db.tx(async () => {
      const running = await this.#db.all<{ provider: string; owner: string; repo: string }>(
        sql`SELECT s.provider, t.owner, t.repo FROM sessions s JOIN steps t ON t.id = s.step_id WHERE t.run_id = ${runId} AND t.position > 0 AND t.phase = 'agent' AND s.state = 'running' AND s.pass = ${pass.number}`,
      );
      const here = (item: NewGuidance) =>
        item.owner === null ||
        running.some(
          (r) => r.owner.toLowerCase() === item.owner?.toLowerCase() && r.repo.toLowerCase() === item.repo?.toLowerCase(),
        );
      if (running.length === 0 || !items.every((item) => item.source !== "continue" && here(item))) return [];
      for (const item of items) await insertGuidance(this.#db, runId, pass.id, item);
      return [...new Set(running.map((session) => session.provider))];
    }, runLock(runId));
  }

  async forPass(passId: number): Promise<GuidanceRow[]> {
    return this.#db.all(sql`SELECT * FROM guidance WHERE pass_id = ${passId} ORDER BY id`);
  }

  /** Guidance waiting for the next pass. */
  async queued(runId: number): Promise<GuidanceRow[]> {
    return this.#db.all(sql`SELECT * FROM guidance WHERE run_id = ${runId} AND pass_id IS NULL ORDER BY id`);
  }

  /** Every guidance item of a run bound to a pass, oldest first: the ledger later passes must keep. */
  async ledger(runId: number): Promise<(GuidanceRow & { pass: number })[]> {
    return this.#db.all(
      sql`SELECT g.*, p.number AS pass FROM guidance g JOIN passes p ON p.id = g.pass_id WHERE g.run_id = ${runId} ORDER BY g.id`,
    );
  }

  /** What the agent said it did with a guidance item. */
  async recordStatus(id: number, status: GuidanceRow["status"], note: string | null): Promise<void> {
    await this.#db.update("guidance", id, { status, status_note: note });
  }

  /** Lisa answered the review comment the item came from. */
  async markReplied(id: number): Promise<void> {
    await this.#db.update("guidance", id, { replied: 1 });
  }
}

/**
 * One row per delivery and comment. UNIQUE (delivery_id, github_id) cannot see a NULL github_id
 * (a command's or a review body's text), so those are matched on their text too: a command handled
 * again after a crash adds nothing, while the refinements of one continue stay apart.
 */
export async function insertGuidance(db: Database, runId: number, passId: number | null, item: NewGuidance): Promise<void> {
  await db.run(sql`INSERT INTO guidance (run_id, pass_id, delivery_id, source, owner, repo, pr_number, author, url, github_id, path, line, diff_hunk, outdated, body, created_at)
     SELECT ${runId}, ${passId}, ${item.delivery_id}, ${item.source}, ${item.owner}, ${item.repo}, ${item.pr_number}, ${item.author}, ${item.url}, ${item.github_id}, ${item.path}, ${item.line}, ${item.diff_hunk}, ${item.outdated}, ${item.body}, ${db.now()}
     WHERE NOT EXISTS (SELECT 1 FROM guidance WHERE delivery_id = ${item.delivery_id} AND github_id IS NOT DISTINCT FROM ${item.github_id} AND source = ${item.source} AND body = ${item.body})
     ON CONFLICT DO NOTHING`);
}
