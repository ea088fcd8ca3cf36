import { AsyncLocalStorage } from "node:async_hooks";
import { join, raw, type Sql, type SqlValue, sql } from "./sql.ts";
import type { SqlDriver, SqlStatements } from "./sql-driver.ts";

type Table = "runs" | "steps" | "sessions" | "passes" | "step_passes" | "guidance";
const TABLES_WITH_UPDATED_AT: ReadonlySet<Table> = new Set(["runs", "steps"]);

/**
 * What every group of records shares: the driver, the clock, and the transaction the current call
 * chain runs in. A record method called inside a transaction joins it; calls from elsewhere (another
 * webhook, another run) stay out of it.
 */
export class Database {
  readonly driver: SqlDriver;
  readonly now: () => number;
  readonly #transaction = new AsyncLocalStorage<SqlStatements>();

  constructor(driver: SqlDriver, now: () => number) {
    this.driver = driver;
    this.now = now;
  }

  /** The open transaction's statements inside one, the connection's outside. */
  statements(): SqlStatements {
    return this.#transaction.getStore() ?? this.driver;
  }

  get inTransaction(): boolean {
    return this.#transaction.getStore() !== undefined;
  }

  async get<T>(query: Sql): Promise<T | undefined> {
    return (await this.statements().all<T>(query))[0];
  }

  all<T>(query: Sql): Promise<T[]> {
    return this.statements().all<T>(query);
  }

  run(query: Sql): Promise<{ changes: number }> {
    return this.statements().run(query);
  }

  /** Runs an INSERT … RETURNING id: the new row's id. */
  async insert(query: Sql): Promise<number> {
    const { rows } = await this.statements().run<{ id: number }>(query);
    return Number(rows[0]?.id);
  }

  /** Writes `changes` to one row; undefined leaves a column as it is. Only the record groups call it. */
  async update(table: Table, id: number, changes: Record<string, SqlValue | undefined>): Promise<void> {
    const entries = definedEntries(changes);
    if (TABLES_WITH_UPDATED_AT.has(table)) entries.push(["updated_at", this.now()]);
    if (entries.length === 0) return;
    await this.run(sql`UPDATE ${raw(table)} SET ${assignments(entries)} WHERE id = ${id}`);
  }

  /**
   * Runs `work` in one transaction: all of it is written, or none. Nested calls join the outer one.
   * `lock`: the key (a run's, an installation's slots') that what `work` reads and then writes
   * depends on; transactions on other keys go on beside it (PostgreSQL; SQLite has one writer).
   */
  async tx<T>(work: () => Promise<T>, lock?: string): Promise<T> {
    const open = this.#transaction.getStore();
    if (open) {
      if (lock) await open.lock?.(lock);
      return work();
    }
    return this.driver.transaction((tx) =>
      this.#transaction.run(tx, async () => {
        if (lock) await tx.lock?.(lock);
        return work();
      }),
    );
  }
}

/** The entries of `changes` that say something: undefined leaves a column as it is. */
export const definedEntries = (changes: Record<string, SqlValue | undefined>) =>
  Object.entries(changes).filter((entry): entry is [string, SqlValue] => entry[1] !== undefined);

/** `column = value, …` for an UPDATE: the columns are the store's own names, the values bound. */
export const assignments = (entries: readonly [string, SqlValue][]) =>
  join(entries.map(([column, value]) => sql`${raw(column)} = ${value}`));

/** The lock key of a run's rows: its run, passes, steps and guidance. */
export const runLock = (runId: number) => `run:${runId}`;
