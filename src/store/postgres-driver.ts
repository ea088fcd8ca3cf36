// Over 250 lines: the pool, its transactions, its session locks and what an outage does to
// each share one connection state (#outage, #closing); splitting them would hand that state around.
import pg from "pg";
import { migratePostgres } from "./schema/migrate-postgres.ts";
import { render, type Sql, type SqlValue } from "./sql.ts";
import {
  type ConnectionChange,
  DATABASE_UNAVAILABLE,
  isConnectionLoss,
  type SqlDriver,
  type SqlStatements,
} from "./sql-driver.ts";

/** How long a statement may take before the store gives up on PostgreSQL (its own statement_timeout is 25 s). */
const ANSWER_MS = 30_000;
/** The pause before the first probe for a lost server; it doubles up to PROBE_MAX_MS. */
const PROBE_FIRST_MS = 100;
const PROBE_MAX_MS = 5_000;
/**
 * How long after a loss statements wait for the server to come back before they fail as
 * unavailable: a blip passes unseen, and in a longer outage they fail at once (a web process answers
 * 503 rather than holding every delivery for the length of a connection timeout).
 */
const STATEMENT_WAIT_MS = 1_000;

/**
 * Lisa's advisory locks, each keyed on the schema too: stores in different schemas of one database
 * do not wait on each other. Migrations take the schema's own lock; transactions take the keys the
 * store names (a run, an installation's write slots), so only those on the same run wait for each
 * other; named locks (tryLock) are held for a session.
 */
const LOCKS = 0x4c697361; // "Lisa": the advisory-lock space Lisa's keys live in
const MIGRATION_LOCK = `pg_advisory_xact_lock(${LOCKS}, hashtext(current_schema()))`;
/** The key of a lock, per schema; its name is the statement's parameter. */
const NAMED_LOCK = `${LOCKS}, hashtext(current_schema() || ':' || $1)`;

// Ids and times (milliseconds) are BIGINT and sums NUMERIC: all fit a double, and rows must look as SQLite's do.
pg.types.setTypeParser(20, Number);
pg.types.setTypeParser(1700, Number);

const unavailable = (why: string) =>
  Object.assign(new Error(`the database is unavailable (${why})`), { code: DATABASE_UNAVAILABLE });

/** A statement's own failure (a constraint, a syntax error), named as PostgreSQL's with its code kept. */
const failed = (error: unknown) =>
  Object.assign(new Error(`PostgreSQL: ${(error as Error).message}`), { code: (error as { code?: string }).code });

/** pg's own deadline for an answer (query_timeout): the server is as good as gone. */
const isUnanswered = (error: unknown) => /Query read timeout/.test((error as Error | undefined)?.message ?? "");

/**
 * The shared store: a PostgreSQL database, named by `DATABASE_URL`, reached through a pool of
 * connections. A `schema` query parameter picks the schema (`lisa` by default), so several Lisas (or
 * tests) can share one database. Statements come with their values apart (sql.ts), in `$n` placeholders.
 *
 * A read that failed because its connection was lost runs once more on another; a write does not (it
 * may have been done before its answer was lost), and a transaction keeps the connection it began on:
 * once that is lost, its statements and its COMMIT fail with DATABASE_UNAVAILABLE and the store's
 * caller sees the whole transaction fail, as with any other error, and retries or recovers as it
 * already does. A loss is said once, and its end once, to `onConnection`'s listeners.
 */
export class PostgresDriver implements SqlDriver {
  readonly #pool: pg.Pool;
  readonly #ready: Promise<void>;
  /** The named locks held, each on the connection that took it (a session lock dies with its connection). */
  readonly #locks = new Map<string, pg.PoolClient>();
  readonly #listeners: ((event: ConnectionChange) => void)[] = [];
  /** While the server is lost: why, since when, and the probe under way that resolves when it is back. */
  #outage: { since: number; error: string; attempts: number; back: Promise<void> } | undefined;
  #closing = false;

  constructor(url: string) {
    const { connection, schema } = splitSchema(url);
    this.#pool = new pg.Pool({
      connectionString: connection,
      // Named by schema too: an operator (or a test) can tell which Lisa on a shared server holds which connections.
      application_name: `lisa ${schema}`,
      // A statement blocked for long (a lock held by a stuck writer) fails before the store's own wait
      // gives up, and a transaction left open by a frozen process does not hold the write lock for ever.
      options: `-c search_path=${schema} -c statement_timeout=25000 -c idle_in_transaction_session_timeout=60000`,
      connectionTimeoutMillis: 5_000,
      query_timeout: ANSWER_MS,
      // A partition that drops packets without a reset is found by the kernel in seconds, not 15 minutes.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      max: 10,
    });
    // A connection dropped while idle, or while a lock or a transaction holds it, must not crash the process.
    this.#pool.on("error", (error) => this.#lose(error.message));
    this.#pool.on("connect", (client) => client.on("error", (error) => this.#lose(error.message)));
    this.#ready = this.#prepare(schema);
    // Whoever asks first sees a failure to prepare; it must not count as unhandled before then.
    this.#ready.catch(() => {});
  }

  /** Creates the schema when missing and migrates it; every statement waits for this. */
  async #prepare(schema: string): Promise<void> {
    const client = await this.#pool.connect();
    try {
      try {
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      } catch (error) {
        // Two processes creating the schema at once: one of them meets the other's row.
        if (!["23505", "42P06"].includes((error as { code?: string }).code ?? "")) throw error;
      }
      await migratePostgres(client, MIGRATION_LOCK);
    } finally {
      client.release();
    }
  }

  /** Resolves once the schema is ready; rejects with why it could not be reached or migrated. */
  ready(): Promise<void> {
    return this.#ready;
  }

  /** Runs SQL as written (PostgreSQL's dialect, several statements allowed, no parameters). */
  async script(sql: string): Promise<void> {
    await this.#statement(undefined, sql, undefined, false);
  }

  async all<T>(query: Sql): Promise<T[]> {
    // A read whose connection was lost under it runs again.
    return (await this.#statement(undefined, text(query), query.values, true)).rows as T[];
  }

  async run<T>(query: Sql): Promise<{ changes: number; rows: T[] }> {
    return this.#written<T>(undefined, query);
  }

  async #written<T>(client: pg.PoolClient | undefined, query: Sql) {
    const { rows, rowCount } = await this.#statement(client, text(query), query.values, false);
    return { changes: rowCount ?? 0, rows: rows as T[] };
  }

  /** One statement on the pool (a read runs once more when its connection was lost), or on `client`. */
  async #statement(client: pg.PoolClient | undefined, text: string, params: readonly SqlValue[] | undefined, read: boolean) {
    await this.#ready;
    if (!client) await this.#reachable();
    for (let attempt = 0; ; attempt++) {
      try {
        return await (client ?? this.#pool).query(text, params ? [...params] : undefined);
      } catch (error) {
        if (isUnanswered(error)) throw unavailable(`PostgreSQL did not answer within ${ANSWER_MS / 1000} s`);
        if (!isConnectionLoss(error)) throw failed(error);
        this.#lose((error as Error).message);
        if (client) throw unavailable(`the connection this transaction ran on was lost: ${(error as Error).message}`);
        if (!read || attempt > 0) throw unavailable((error as Error).message);
      }
    }
  }

  async transaction<T>(work: (tx: SqlStatements) => Promise<T>): Promise<T> {
    const client = await this.#connect();
    let lost = false;
    const on = async <R>(statement: () => Promise<R>): Promise<R> => {
      try {
        return await statement();
      } catch (error) {
        lost ||= (error as { code?: string }).code === DATABASE_UNAVAILABLE;
        throw error;
      }
    };
    const tx: SqlStatements = {
      all: async <R>(query: Sql) => on(async () => (await this.#statement(client, text(query), query.values, true)).rows as R[]),
      run: <R>(query: Sql) => on(() => this.#written<R>(client, query)),
      lock: async (key: string) => {
        await on(() => this.#statement(client, `SELECT pg_advisory_xact_lock(${NAMED_LOCK})`, [key], false));
      },
    };
    try {
      await on(() => this.#statement(client, "BEGIN", undefined, false));
      const result = await work(tx);
      await on(() => this.#statement(client, "COMMIT", undefined, false));
      return result;
    } catch (error) {
      // A transaction whose connection was lost died with it; one still open is taken back.
      if (!lost) await client.query("ROLLBACK").catch(() => (lost = true));
      throw error;
    } finally {
      client.release(lost || undefined);
    }
  }

  /** A connection of the pool for this caller alone, or DATABASE_UNAVAILABLE. */
  async #connect(): Promise<pg.PoolClient> {
    await this.#ready;
    await this.#reachable();
    try {
      return await this.#pool.connect();
    } catch (error) {
      this.#lose((error as Error).message);
      throw unavailable((error as Error).message);
    }
  }

  onConnection(listener: (event: ConnectionChange) => void): void {
    this.#listeners.push(listener);
  }

  isUniqueViolation(error: unknown): boolean {
    return (error as { code?: string }).code === "23505";
  }

  async tryLock(name: string): Promise<boolean> {
    const client = await this.#connect();
    try {
      const { rows } = await client.query(`SELECT pg_try_advisory_lock(${NAMED_LOCK}) AS taken`, [name]);
      if (rows[0]?.taken === true) {
        this.#locks.set(name, client);
        return true;
      }
      client.release();
      return false;
    } catch (error) {
      client.release(true);
      if (isConnectionLoss(error)) throw unavailable((error as Error).message);
      throw failed(error);
    }
  }

  async holds(name: string): Promise<boolean> {
    const client = this.#locks.get(name);
    if (!client) return false;
    try {
      await client.query("SELECT 1");
      return true;
    } catch (error) {
      if (isConnectionLoss(error) || isUnanswered(error)) return false;
      throw failed(error);
    }
  }

  async unlock(name: string): Promise<void> {
    const client = this.#locks.get(name);
    this.#locks.delete(name);
    if (!client) return;
    try {
      await client.query(`SELECT pg_advisory_unlock(${NAMED_LOCK})`, [name]);
      client.release();
    } catch (error) {
      // A lock whose connection was lost went with it.
      client.release(true);
      if (!isConnectionLoss(error)) throw failed(error);
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    for (const client of this.#locks.values()) client.release(true);
    this.#locks.clear();
    await this.#pool.end();
  }

  /** During an outage, waits a little for the server to come back, then fails as unavailable. */
  async #reachable(): Promise<void> {
    const outage = this.#outage;
    if (!outage) return;
    const left = outage.since + STATEMENT_WAIT_MS - Date.now();
    if (left > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([outage.back, new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
    if (this.#outage) throw unavailable(this.#outage.error);
  }

  /** The server was lost: said once, then probed with backoff until it answers, and its return said. */
  #lose(why: string): void {
    if (this.#closing || this.#outage) return;
    const since = Date.now();
    const outage = { since, error: why, attempts: 0, back: Promise.resolve() };
    outage.back = (async () => {
      for (let wait = PROBE_FIRST_MS; ; wait = Math.min(wait * 2, PROBE_MAX_MS)) {
        await new Promise((resolve) => setTimeout(resolve, wait).unref());
        if (this.#closing) return;
        outage.attempts += 1;
        try {
          await this.#pool.query("SELECT 1");
          this.#outage = undefined;
          this.#say({ kind: "restored", downMs: Date.now() - since, attempts: outage.attempts });
          return;
        } catch (error) {
          outage.error = (error as Error).message;
        }
      }
    })();
    this.#outage = outage;
    this.#say({ kind: "lost", error: why });
  }

  #say(event: ConnectionChange): void {
    for (const listener of this.#listeners) listener(event);
  }
}

/** The statement as PostgreSQL reads it: `$n` placeholders. */
const text = (query: Sql) => render(query, (n) => `$${n}`);

/** The connection string without Lisa's `schema` parameter, and that schema. */
export function splitSchema(url: string): { connection: string; schema: string } {
  const parsed = new URL(url);
  const schema = parsed.searchParams.get("schema") ?? "lisa";
  parsed.searchParams.delete("schema");
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`DATABASE_URL's schema "${schema}" must be lower-case letters, digits and underscores`);
  }
  return { connection: parsed.toString(), schema };
}
