/** A value a statement binds: Lisa's rows hold text, numbers and nulls only. */
export type SqlValue = string | number | null;

/**
 * What the store needs of a database: synchronous statements written in SQLite's dialect with `?`
 * parameters, and transactions that serialize writers. SQLite (embedded, the default) and
 * PostgreSQL (`DATABASE_URL`, shared by web and worker processes) each provide one, so the store has
 * one code path for both.
 */
export interface SqlDriver {
  get<T>(sql: string, params: readonly SqlValue[]): T | undefined;
  all<T>(sql: string, params: readonly SqlValue[]): T[];
  /** Runs a write; `id` is the new row's id for an INSERT that added one. */
  run(sql: string, params: readonly SqlValue[]): { id: number; changes: number };
  /** Starts a transaction that holds the database's write lock until `commit` or `rollback`. */
  begin(): void;
  commit(): void;
  rollback(): void;
  isUniqueViolation(error: unknown): boolean;
  /**
   * Takes the named lock for this connection if no other holds it, without waiting; it is released
   * by `unlock`, or when the connection ends (a process killed). One process needs none: true.
   */
  tryLock(name: string): boolean;
  unlock(name: string): void;
  close(): void;
}

/** Whether a store location names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//.test(location);
}
