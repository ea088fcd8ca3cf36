import { randomBytes } from "node:crypto";
import { CommandRecords } from "./commands.ts";
import { ConfigFileRecords } from "./config-files.ts";
import { Database, runLock } from "./database.ts";
import { EventRecords } from "./events.ts";
import { GuidanceRecords } from "./guidance.ts";
import { LearningRecords } from "./learnings.ts";
import { PassRecords } from "./passes.ts";
import { PostgresDriver } from "./postgres-driver.ts";
import { RedeliveryRecords } from "./redeliveries.ts";
import { RunRecords } from "./runs.ts";
import { SessionRecords } from "./sessions.ts";
import { type ConnectionChange, isPostgresUrl, type SqlDriver } from "./sql-driver.ts";
import { SqliteDriver } from "./sqlite-driver.ts";
import { StepRecords } from "./steps.ts";
import { WriteSlotRecords } from "./write-slots.ts";

export type { NewGuidance } from "./guidance.ts";
export type { AnchorRow, MemoryPullRow, NewReflection, ReflectionRow } from "./learnings.ts";
export type { PassOutcome } from "./passes.ts";
export type * from "./rows.ts";
export type { RunStateFields } from "./run-transition.ts";
export type { NewRun } from "./runs.ts";
export type { NewStep, StepFields, StepPassFields } from "./steps.ts";

/**
 * Lisa's durable state: webhook commands waiting to be handled, and runs with their passes, steps,
 * agent sessions, guidance and event log, each group of records in a module of its own. One SQLite
 * file in the data directory by default, or a PostgreSQL database (`DATABASE_URL`) shared by web
 * and worker processes. Every write is committed before the caller goes on to the side effect it
 * records, and state changes are compare-and-set on the state they were decided from.
 */
export class Store {
  readonly #driver: SqlDriver;
  readonly #db: Database;
  readonly commands: CommandRecords;
  readonly configFiles: ConfigFileRecords;
  readonly runs: RunRecords;
  readonly passes: PassRecords;
  readonly steps: StepRecords;
  readonly sessions: SessionRecords;
  readonly guidance: GuidanceRecords;
  readonly events: EventRecords;
  readonly writeSlots: WriteSlotRecords;
  readonly learnings: LearningRecords;
  readonly redeliveries: RedeliveryRecords;

  /**
   * `location`: a SQLite file (or `:memory:`), or a `postgres://` URL. `commandKey` signs the
   * command rows this store writes and checks those it reads (commandKey()); without one, a key of
   * this store's own, so only the rows it wrote itself are genuine to it.
   */
  constructor(location: string, now: () => number = Date.now, commandKey: Buffer = randomBytes(32)) {
    this.#driver = isPostgresUrl(location) ? new PostgresDriver(location) : new SqliteDriver(location);
    this.#db = new Database(this.#driver, now);
    this.commands = new CommandRecords(this.#db, commandKey);
    this.configFiles = new ConfigFileRecords(this.#db);
    this.runs = new RunRecords(this.#db);
    this.passes = new PassRecords(this.#db);
    this.steps = new StepRecords(this.#db);
    this.sessions = new SessionRecords(this.#db);
    this.guidance = new GuidanceRecords(this.#db);
    this.events = new EventRecords(this.#db);
    this.writeSlots = new WriteSlotRecords(this.#db);
    this.learnings = new LearningRecords(this.#db);
    this.redeliveries = new RedeliveryRecords(this.#db);
  }

  /** Resolves once the database is reachable and its schema migrated; rejects saying why not. */
  async ready(): Promise<void> {
    await this.#driver.ready?.();
  }

  async close(): Promise<void> {
    await this.#driver.close();
  }

  /** Called when the database connection is lost and when it is back (a shared PostgreSQL store only). */
  onConnection(listener: (event: ConnectionChange) => void): void {
    this.#driver.onConnection?.(listener);
  }

  /**
   * Runs `work` as one transaction, and returns undefined with nothing written when it returns
   * undefined (a run's compare-and-set lost): the changes of run-changes.ts, each all or nothing.
   * Not to be nested in another transaction, whose writes it could not take back. `runId`: the run
   * whose rows it reads before it writes, locked for its length.
   */
  async atomically<T>(work: () => Promise<T | undefined>, runId?: number): Promise<T | undefined> {
    if (this.#db.inTransaction) throw new Error("Store.atomically is a transaction of its own, not a part of another");
    const refused = Symbol("refused");
    try {
      return await this.#db.tx(
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
    if (!(await this.#driver.tryLock(name))) return undefined;
    try {
      return await work(() => this.#driver.holds(name));
    } finally {
      await this.#driver.unlock(name);
    }
  }
}
