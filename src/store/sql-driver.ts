import type { Sql } from "./sql.ts";

/**
 * The store's statements (sql.ts), written in the SQL both databases read, run on a connection or
 * inside a transaction.
 */
export interface SqlStatements {
  /** A read: the rows it selected. */
  all<T>(query: Sql): Promise<T[]>;
  /** A write: how many rows it changed, and the rows its RETURNING clause gave back. */
  run<T = Record<string, unknown>>(query: Sql): Promise<{ changes: number; rows: T[] }>;
  /**
   * Inside a transaction: waits until no other transaction holds `key`, then holds it until this
   * one ends. What two transactions read and then write under one key cannot interleave.
   */
  lock?(key: string): Promise<void>;
}

/**
 * What the store needs of a database: asynchronous statements, and transactions that serialize
 * writers. SQLite (embedded, the default) and PostgreSQL (`DATABASE_URL`, shared by web and worker
 * processes) each provide one, so the store has one code path for both.
 */
export interface SqlDriver extends SqlStatements {
  /**
   * Runs `work` in a transaction: its statements go through `tx`, and it is committed when `work`
   * resolves, rolled back when it throws.
   */
  transaction<T>(work: (tx: SqlStatements) => Promise<T>): Promise<T>;
  isUniqueViolation(error: unknown): boolean;
  /** Resolves once the database is reachable and its schema migrated (a server's store only). */
  ready?(): Promise<void>;
  /**
   * Takes the named lock for this store if no other holds it, without waiting; it is released by
   * `unlock`, or when the connection ends (a process killed). One process needs none: true.
   */
  tryLock(name: string): Promise<boolean>;
  /** Whether this store still holds the named lock: a lost connection took its locks with it. */
  holds(name: string): Promise<boolean>;
  unlock(name: string): Promise<void>;
  close(): Promise<void>;
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

/**
 * Whether a PostgreSQL statement or pool failed because its connection was lost (ended by the
 * server, or the server went away), or the server refused a new one (too many clients: 53300).
 */
export function isConnectionLoss(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return (
    code?.startsWith("08") === true ||
    ["53300", "57P01", "57P02", "57P03", "ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT"].includes(code ?? "") ||
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
