import { decodeRun, type Stored } from "./columns.ts";
import { type Database, runLock } from "./database.ts";
import { logEvent } from "./events.ts";
import type { RunRow } from "./rows.ts";
import { raw, sql } from "./sql.ts";
import { nextRunState, type RunEvent, TERMINAL_RUN_STATES } from "./transitions.ts";

/** The columns of a run that change with its state: why it failed, and one more restart. */
export type RunStateFields = { error?: string | null; restart?: true };

/**
 * Moves a run along the transition table, as a compare-and-set on the state it is in now, and
 * logs the event; `fields` change with it. Returns the run in its new state, or undefined when the
 * table refuses the event from the current state (or another writer changed it first).
 */
export async function transitionRun(
  db: Database,
  runId: number,
  event: RunEvent,
  detail: { actor?: string; note?: string } = {},
  fields: RunStateFields = {},
): Promise<RunRow | undefined> {
  return db.tx(async () => {
    const run = await db.get<Pick<RunRow, "state" | "current_pass">>(
      sql`SELECT state, current_pass FROM runs WHERE id = ${runId}`,
    );
    const to = run && nextRunState(run.state, event);
    if (!run || !to) return undefined;
    const now = db.now();
    const finished = TERMINAL_RUN_STATES.has(to) ? now : null;
    const error = fields.error === undefined ? raw("") : sql`, error = ${fields.error}`;
    const restart = fields.restart ? raw(", restarts = restarts + 1") : raw("");
    const { changes } = await db.run(
      sql`UPDATE runs SET state = ${to}, finished_at = ${finished}, updated_at = ${now}${error}${restart} WHERE id = ${runId} AND state = ${run.state}`,
    );
    if (changes === 0) return undefined;
    const cause = { actor: detail.actor ?? null, detail: detail.note ?? null };
    await logEvent(db, { runId, pass: run.current_pass, kind: event, from: run.state, to, ...cause });
    return readRun(db, runId);
  }, runLock(runId));
}

/** A run's row, decoded. */
export async function readRun(db: Database, runId: number): Promise<RunRow | undefined> {
  const run = await db.get<Stored<RunRow>>(sql`SELECT * FROM runs WHERE id = ${runId}`);
  return run && decodeRun(run);
}
