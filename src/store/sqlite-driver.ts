import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { migrate } from "./migrations.ts";
import type { SqlDriver, SqlValue } from "./sql-driver.ts";

/** The embedded store: one SQLite file in the data directory, in WAL mode. */
export class SqliteDriver implements SqlDriver {
  readonly #db: DatabaseSync;

  constructor(file: string) {
    if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true });
    this.#db = new DatabaseSync(file);
    this.#db.exec("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;");
    migrate(this.#db);
  }

  get<T>(sql: string, params: readonly SqlValue[]): T | undefined {
    return this.#db.prepare(sql).get(...(params as SQLInputValue[])) as T | undefined;
  }

  all<T>(sql: string, params: readonly SqlValue[]): T[] {
    return this.#db.prepare(sql).all(...(params as SQLInputValue[])) as T[];
  }

  run(sql: string, params: readonly SqlValue[]): { id: number; changes: number } {
    const result = this.#db.prepare(sql).run(...(params as SQLInputValue[]));
    return { id: Number(result.lastInsertRowid), changes: Number(result.changes) };
  }

  begin(): void {
    this.#db.exec("BEGIN IMMEDIATE");
  }

  commit(): void {
    this.#db.exec("COMMIT");
  }

  rollback(): void {
    // SQLite rolls a transaction back by itself after some errors (a full disk among them); a second
    // ROLLBACK would throw in place of the error that caused it.
    if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
  }

  isUniqueViolation(error: unknown): boolean {
    return (error as { errcode?: number }).errcode === 2067; // SQLITE_CONSTRAINT_UNIQUE
  }

  tryLock(): boolean {
    return true;
  }

  holds(): boolean {
    return true;
  }

  unlock(): void {}

  close(): void {
    this.#db.close();
  }
}
