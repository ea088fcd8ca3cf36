import type { Database } from "./database.ts";
import type { EventRow } from "./rows.ts";
import { sql } from "./sql.ts";

/** A run's event log: every state change, and what happened without one. */
export class EventRecords {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Logs something that happened to a run without a state change, e.g. a human push or a dropped PR. */
  async add(runId: number, kind: string, detail: { actor?: string; note?: string; pass?: number } = {}): Promise<void> {
    const pass =
      detail.pass ??
      (await this.#db.get<{ current_pass: number }>(sql`SELECT current_pass FROM runs WHERE id = ${runId}`))?.current_pass ??
      null;
    await logEvent(this.#db, { runId, pass, kind, actor: detail.actor ?? null, detail: detail.note ?? null });
  }

  async of(runId: number): Promise<EventRow[]> {
    return this.#db.all(sql`SELECT * FROM events WHERE run_id = ${runId} ORDER BY id`);
  }
}

/** Writes one event; a state change names the states it went from and to. */
export async function logEvent(
  db: Database,
  event: {
    runId: number;
    pass: number | null;
    kind: string;
    from?: string;
    to?: string;
    actor: string | null;
    detail: string | null;
  },
): Promise<void> {
  await db.run(
    sql`INSERT INTO events (run_id, pass, kind, from_state, to_state, actor, detail, created_at) VALUES (${event.runId}, ${event.pass}, ${event.kind}, ${event.from ?? null}, ${event.to ?? null}, ${event.actor}, ${event.detail}, ${db.now()})`,
  );
}
