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
  /** Whether this process still holds the named lock: a lost connection took its locks with it. */
  holds(name: string): boolean;
  unlock(name: string): void;
  close(): void;
  /** Called when the connection to a database server is lost, and when it is back (PostgreSQL only). */
  onConnection?(listener: (event: ConnectionChange) => void): void;
}

/** A database connection lost (`error`: why), or back after `downMs` and `attempts` reconnection attempts. */
export type ConnectionChange = { kind: "lost"; error: string } | { kind: "restored"; downMs: number; attempts: number };

/**
 * The code of the error a statement fails with while the database cannot be reached, or when the
 * connection its transaction ran on was lost: nothing it asked was done (or, for a write whose
 * answer was lost, may have been: the store's writes are idempotent or compare-and-set).
 */
export const DATABASE_UNAVAILABLE = "LISA_DB_UNAVAILABLE";

/** Whether a PostgreSQL statement or pool failed because its connection was lost (ended by the server, or the server went away). */
export function isConnectionLoss(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return (
    code?.startsWith("08") === true ||
    ["57P01", "57P02", "57P03", "ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT"].includes(code ?? "") ||
    /Connection terminated|not queryable|ECONNRESET|EPIPE|timeout exceeded when trying to connect/.test(message ?? "")
  );
}

/** Whether `error` says the database could not be reached, rather than what a statement did. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === DATABASE_UNAVAILABLE;
}

/** Whether a store location names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//.test(location);
}
