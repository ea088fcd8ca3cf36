import type { Database } from "./database.ts";
import type { SessionRow } from "./rows.ts";
import { sql } from "./sql.ts";

/** The agent and planning sessions of each step, with the process each ran in. */
export class SessionRecords {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async start(
    session: Pick<SessionRow, "step_id" | "iteration" | "purpose" | "provider" | "model"> & { pass?: number },
  ): Promise<number> {
    const pass =
      session.pass ??
      (await this.#db.get<{ pass: number }>(sql`SELECT pass FROM steps WHERE id = ${session.step_id}`))?.pass ??
      null;
    return this.#db.insert(
      sql`INSERT INTO sessions (step_id, pass, iteration, purpose, provider, model, state, started_at) VALUES (${session.step_id}, ${pass}, ${session.iteration}, ${session.purpose}, ${session.provider}, ${session.model}, 'running', ${this.#db.now()}) RETURNING id`,
    );
  }

  /**
   * Records how a running session ended; one marked interrupted or stopped meanwhile (Lisa shutting
   * down, a person stopping it) stays so. Returns false then: the session's end is not its own.
   */
  async finish(
    id: number,
    changes: Pick<SessionRow, "state" | "cost_usd" | "turns" | "failure_kind" | "message">,
  ): Promise<boolean> {
    const { changes: updated } = await this.#db.run(
      sql`UPDATE sessions SET state = ${changes.state}, cost_usd = ${changes.cost_usd}, turns = ${changes.turns}, failure_kind = ${changes.failure_kind}, message = ${changes.message}, finished_at = ${this.#db.now()} WHERE id = ${id} AND state = 'running'`,
    );
    return updated > 0;
  }

  async recordPid(id: number, pid: number, identity: string | undefined): Promise<void> {
    await this.#db.update("sessions", id, { pid, pid_identity: identity ?? null });
  }

  async of(stepId: number): Promise<SessionRow[]> {
    return this.#db.all(sql`SELECT * FROM sessions WHERE step_id = ${stepId} ORDER BY id`);
  }

  /** Ends the running sessions of one run as interrupted and returns them (a hand-back or a takeover). */
  interruptRun(runId: number, message: string): Promise<SessionRow[]> {
    return interruptRunSessions(this.#db, runId, message);
  }

  /**
   * Marks the running sessions of a run (or of one of its steps) as stopped by a person, before
   * their processes are killed, so the kill is not recorded as the agent crashing. Returns them.
   */
  async stop(runId: number, stepId?: number): Promise<SessionRow[]> {
    const running = (await runningSessions(this.#db, runId)).filter((s) => stepId === undefined || s.step_id === stepId);
    for (const session of running) {
      await this.#db.run(
        sql`UPDATE sessions SET state = 'stopped', finished_at = ${this.#db.now()} WHERE id = ${session.id} AND state = 'running'`,
      );
    }
    return running;
  }

  /** Sessions of a run still running, e.g. to stop them on `/lisa abort`. */
  runningIn(runId: number): Promise<SessionRow[]> {
    return runningSessions(this.#db, runId);
  }

  /**
   * Sessions a dead process left running; they will never report, so they end as interrupted.
   * Returns them, with the process groups their agents ran in.
   */
  async interruptAll(): Promise<SessionRow[]> {
    const running = await this.#db.all<SessionRow>(sql`SELECT * FROM sessions WHERE state = 'running'`);
    await this.#db.run(
      sql`UPDATE sessions SET state = 'interrupted', finished_at = ${this.#db.now()}, message = 'Lisa stopped during this session' WHERE state = 'running'`,
    );
    return running;
  }
}

const runningSessions = (db: Database, runId: number) =>
  db.all<SessionRow>(
    sql`SELECT s.* FROM sessions s JOIN steps t ON s.step_id = t.id WHERE t.run_id = ${runId} AND s.state = 'running'`,
  );

/** Ends the running sessions of one run as interrupted, and returns them (runs.takeOver uses it too). */
export async function interruptRunSessions(db: Database, runId: number, message: string): Promise<SessionRow[]> {
  const running = await runningSessions(db, runId);
  for (const session of running) {
    await db.run(
      sql`UPDATE sessions SET state = 'interrupted', finished_at = ${db.now()}, message = ${message} WHERE id = ${session.id} AND state = 'running'`,
    );
  }
  return running;
}
