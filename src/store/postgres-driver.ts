import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { migratePostgres } from "./postgres-migrations.ts";
import type { Answer, ConnectionEvent, Request, ThreadData } from "./postgres-thread.ts";
import {
  type ConnectionChange,
  DATABASE_UNAVAILABLE,
  isDatabaseUnavailable,
  type SqlDriver,
  type SqlValue,
} from "./sql-driver.ts";

/** How long a statement may take before the store gives up on PostgreSQL (its own statement_timeout is 25 s). */
const ANSWER_MS = 30_000;

/**
 * Writers take one advisory lock for the length of their transaction, as SQLite's BEGIN IMMEDIATE
 * does, so the store's read-then-write transactions keep their meaning with many processes. It is
 * keyed on the schema too: stores in different schemas of one database do not wait on each other.
 */
const LOCKS = 0x4c697361; // "Lisa": the advisory-lock space Lisa's keys live in
const WRITE_LOCK = `pg_advisory_xact_lock(${LOCKS}, hashtext(current_schema()))`;
/** The key of a named lock (tryLock), also per schema; its name is the statement's parameter. */
const NAMED_LOCK = `${LOCKS}, hashtext(current_schema() || ':' || ?)`;

/**
 * The shared store: a PostgreSQL database, named by `DATABASE_URL`. A `schema` query parameter
 * picks the schema (`lisa` by default), so several Lisas (or tests) can share one database.
 * Statements are the store's SQLite dialect, translated once each.
 *
 * A lost connection is replaced (postgres-thread.ts). A read that failed because its connection was
 * lost runs once more on the new one; a write does not (it may have been done before its answer was
 * lost), and a transaction is pinned to the connection it began on: once that is lost, its
 * statements and its COMMIT fail with DATABASE_UNAVAILABLE and the store's caller sees the whole
 * transaction fail, as with any other error, and retries or recovers as it already does.
 */
export class PostgresDriver implements SqlDriver {
  readonly #flag = new Int32Array(new SharedArrayBuffer(4));
  readonly #port: MessagePort;
  readonly #thread: Worker;
  readonly #translated = new Map<string, { text: string; returnsId: boolean }>();
  readonly #events: MessagePort;
  #sequence = 0;
  /** The named locks held, by the connection that took them (a session lock dies with its connection). */
  readonly #locks = new Map<string, number>();
  /** The connection the open transaction began on. */
  #pinned: number | undefined;

  constructor(url: string) {
    const { connection, schema } = splitSchema(url);
    const channel = new MessageChannel();
    const events = new MessageChannel();
    const data: ThreadData = {
      url: connection,
      schema,
      signal: this.#flag.buffer as SharedArrayBuffer,
      port: channel.port2,
      events: events.port2,
    };
    this.#thread = new Worker(new URL("./postgres-thread.ts", import.meta.url), {
      workerData: data,
      transferList: [channel.port2, events.port2],
    });
    this.#events = events.port1;
    // The thread serves this store; it must not keep a process alive that is otherwise done.
    this.#thread.unref();
    this.#port = channel.port1;
    this.#port.unref();
    // The thread connects on its own and answers id 0 when ready.
    this.#result(this.#answer(0));
    migratePostgres(this, WRITE_LOCK);
  }

  /** Runs SQL as written (PostgreSQL's dialect, several statements allowed, no parameters). */
  script(sql: string): void {
    this.#call({ kind: "query", sql, ...this.#where(false) });
  }

  get<T>(sql: string, params: readonly SqlValue[]): T | undefined {
    return this.all<T>(sql, params)[0];
  }

  all<T>(sql: string, params: readonly SqlValue[]): T[] {
    const text = this.#translate(sql).text;
    // The store's reads are plain SELECTs (or take and free advisory locks, which die with their connection).
    return this.#call({ kind: "query", sql: text, params: [...params], ...this.#where(/^\s*SELECT/i.test(text)) }).rows as T[];
  }

  run(sql: string, params: readonly SqlValue[]): { id: number; changes: number } {
    const { text, returnsId } = this.#translate(sql);
    const { rows, rowCount } = this.#call({ kind: "query", sql: text, params: [...params], ...this.#where(false) });
    return { id: returnsId ? Number(rows[0]?.id ?? 0) : 0, changes: rowCount };
  }

  /** Inside a transaction, its connection and no retry; outside, a retry when `read`. */
  #where(read: boolean): { pin: number } | { retry: boolean } {
    return this.#pinned === undefined ? { retry: read } : { pin: this.#pinned };
  }

  begin(): void {
    // Nothing is done before the lock is taken: a BEGIN whose connection was lost can begin again.
    this.#pinned = this.#call({ kind: "query", sql: `BEGIN; SELECT ${WRITE_LOCK}`, retry: true }).connection;
  }

  commit(): void {
    // A COMMIT that fails leaves the pin to the ROLLBACK that follows it.
    this.#call({ kind: "query", sql: "COMMIT", ...this.#where(false) });
    this.#pinned = undefined;
  }

  rollback(): void {
    const pin = this.#pinned;
    this.#pinned = undefined;
    this.#call({ kind: "query", sql: "ROLLBACK", ...(pin === undefined ? {} : { pin, lossEnds: true }) });
  }

  onConnection(listener: (event: ConnectionChange) => void): void {
    this.#events.on("message", (event: ConnectionEvent) => listener(event));
    // Listening must not keep a process alive that is otherwise done.
    this.#events.unref();
  }

  isUniqueViolation(error: unknown): boolean {
    return (error as { code?: string }).code === "23505";
  }

  tryLock(name: string): boolean {
    const sql = this.#translate(`SELECT pg_try_advisory_lock(${NAMED_LOCK}) AS taken`).text;
    const { rows, connection } = this.#call({ kind: "query", sql, params: [name], retry: true });
    const taken = rows[0]?.taken === true;
    if (taken) this.#locks.set(name, connection);
    return taken;
  }

  holds(name: string): boolean {
    const pin = this.#locks.get(name);
    if (pin === undefined) return false;
    try {
      this.#call({ kind: "query", sql: "SELECT 1", pin });
      return true;
    } catch (error) {
      if (isDatabaseUnavailable(error)) return false;
      throw error;
    }
  }

  unlock(name: string): void {
    const pin = this.#locks.get(name);
    this.#locks.delete(name);
    if (pin === undefined) return;
    // On the connection that took it; one lost since took the lock with it.
    const sql = this.#translate(`SELECT pg_advisory_unlock(${NAMED_LOCK})`).text;
    this.#call({ kind: "query", sql, params: [name], pin, lossEnds: true });
  }

  close(): void {
    try {
      this.#call({ kind: "close" });
    } finally {
      void this.#thread.terminate();
    }
  }

  #call(request: DistributiveOmit<Request, "id">): { rows: Record<string, unknown>[]; rowCount: number; connection: number } {
    const id = ++this.#sequence;
    this.#port.postMessage({ ...request, id });
    return this.#result(this.#answer(id));
  }

  #result(answer: Answer): { rows: Record<string, unknown>[]; rowCount: number; connection: number } {
    if ("error" in answer) {
      throw Object.assign(new Error(`PostgreSQL: ${answer.error.message}`), { code: answer.error.code });
    }
    return answer;
  }

  /**
   * Sleeps until the thread posts the answer to request `id`. The shared counter is read before
   * looking for a message, so an answer posted in between changes it and the wait returns at once;
   * answers to requests given up on earlier are dropped.
   */
  #answer(id: number): Answer {
    const deadline = Date.now() + ANSWER_MS;
    for (;;) {
      const posted = Atomics.load(this.#flag, 0);
      const received = receiveMessageOnPort(this.#port);
      if (received) {
        const answer = received.message as Answer;
        if (answer.id === id) return answer;
        continue;
      }
      const left = deadline - Date.now();
      // Unanswered this long, the server is as good as gone: webhooks get 503 and runs are handed back.
      if (left <= 0)
        throw Object.assign(new Error(`PostgreSQL did not answer within ${ANSWER_MS / 1000} s`), { code: DATABASE_UNAVAILABLE });
      Atomics.wait(this.#flag, 0, posted, left);
    }
  }

  /** SQLite's dialect as the store writes it, in PostgreSQL's: `$n` parameters, ON CONFLICT, RETURNING id. */
  #translate(sql: string): { text: string; returnsId: boolean } {
    let found = this.#translated.get(sql);
    if (found) return found;
    const ignore = /^\s*INSERT OR IGNORE INTO/i.test(sql);
    let text = sql.replace(/^\s*INSERT OR IGNORE INTO/i, "INSERT INTO");
    let n = 0;
    text = text.replace(/'[^']*'|\?/g, (token) => (token === "?" ? `$${++n}` : token));
    const returnsId = /^\s*INSERT/i.test(text);
    if (ignore) text += " ON CONFLICT DO NOTHING";
    if (returnsId) text += " RETURNING id";
    found = { text, returnsId };
    this.#translated.set(sql, found);
    return found;
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

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
