import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { migrate } from "./schema/migrate-sqlite.ts";
import { render, type Sql } from "./sql.ts";
import type { SqlDriver, SqlStatements } from "./sql-driver.ts";

/**
 * The transaction open on each database file in this process: it settles when that transaction
 * ends. Stores on one file in one process (tests, a CLI beside the App) share it, since one
 * connection's BEGIN IMMEDIATE waiting for another's lock would block the only thread that could
 * let the other finish.
 */
const openOn = new Map<string, Promise<void>>();
/** How many prepared statements a store keeps: Lisa's queries are a few hundred distinct texts. */
const PREPARED_KEPT = 500;
let inMemory = 0;

/**
 * The embedded store: one SQLite file in the data directory, in WAL mode. SQLite answers at once;
 * the one thing asynchrony changes is that other callers can run between a transaction's statements,
 * so while one is open on the file, its statements run alone and everything else waits for its end.
 */
export class SqliteDriver implements SqlDriver {
  readonly #db: DatabaseSync;
  /** Where this store's transactions are kept in `openOn`: a file's path, or a key of its own in memory. */
  readonly #file: string;

  constructor(file: string) {
    if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
    this.#file = file === ":memory:" ? `:memory:${++inMemory}` : path.resolve(file);
    this.#db = new DatabaseSync(file);
    // The busy timeout first: switching the journal mode waits for a lock another process may hold.
    this.#db.exec("PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;");
    migrate(this.#db);
  }

  readonly #direct: SqlStatements = {
    all: async <T>(query: Sql) => this.#prepare(query).all(...(query.values as SQLInputValue[])) as T[],
    run: async <T>(query: Sql) => {
      const statement = this.#prepare(query);
      // A RETURNING clause gives one row per row it changed; without one, SQLite counts them itself.
      if (statement.columns().length > 0) {
        const rows = statement.all(...(query.values as SQLInputValue[])) as T[];
        return { changes: rows.length, rows };
      }
      return { changes: Number(statement.run(...(query.values as SQLInputValue[])).changes), rows: [] };
    },
  };

  /** Statements by their text: preparing one costs more than most of them take to run. */
  readonly #prepared = new Map<string, StatementSync>();

  #prepare(query: Sql) {
    const text = render(query, () => "?");
    let statement = this.#prepared.get(text);
    if (!statement) {
      statement = this.#db.prepare(text);
      // Bounded: the oldest goes first (texts with inlined lists vary).
      if (this.#prepared.size >= PREPARED_KEPT) this.#prepared.delete(this.#prepared.keys().next().value as string);
      this.#prepared.set(text, statement);
    }
    return statement;
  }

  // Each waits for the open transaction inline: the statement must run in the same turn the wait
  // ends in, or another caller could open a transaction in between.
  async all<T>(query: Sql): Promise<T[]> {
    while (openOn.has(this.#file)) await openOn.get(this.#file);
    return this.#direct.all<T>(query);
  }

  async run<T>(query: Sql): Promise<{ changes: number; rows: T[] }> {
    while (openOn.has(this.#file)) await openOn.get(this.#file);
    return this.#direct.run<T>(query);
  }

  async transaction<T>(work: (tx: SqlStatements) => Promise<T>): Promise<T> {
    while (openOn.has(this.#file)) await openOn.get(this.#file);
    let end = () => {};
    openOn.set(this.#file, new Promise((resolve) => (end = resolve)));
    try {
      this.#db.exec("BEGIN IMMEDIATE");
      try {
        const result = await work(this.#direct);
        this.#db.exec("COMMIT");
        return result;
      } catch (error) {
        // SQLite rolls a transaction back by itself after some errors (a full disk among them); a
        // second ROLLBACK would throw in place of the error that caused it.
        if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
        throw error;
      }
    } finally {
      openOn.delete(this.#file);
      end();
    }
  }

  isUniqueViolation(error: unknown): boolean {
    return (error as { errcode?: number }).errcode === 2067; // SQLITE_CONSTRAINT_UNIQUE
  }

  async tryLock(): Promise<boolean> {
    return true;
  }

  async holds(): Promise<boolean> {
    return true;
  }

  async unlock(): Promise<void> {}

  async close(): Promise<void> {
    while (openOn.has(this.#file)) await openOn.get(this.#file);
    this.#db.close();
  }
}
