// The PostgreSQL connection of one store, in a worker thread: the store's API is synchronous (as
// SQLite's is), so the main thread posts a statement and sleeps on a shared flag until this thread,
// which runs node-postgres's asynchronous client, posts the answer and raises the flag. A lost
// connection is replaced, with backoff, for as long as the process lives.
import { type MessagePort, workerData } from "node:worker_threads";
import pg from "pg";
import { DATABASE_UNAVAILABLE, isConnectionLoss } from "./sql-driver.ts";

export interface ThreadData {
  url: string;
  schema: string;
  /** Counts the answers posted (and is notified at each), so the store can sleep until the next one. */
  signal: SharedArrayBuffer;
  port: MessagePort;
  /** Where the thread says that the connection was lost, or is back (ConnectionEvent). */
  events: MessagePort;
}

/**
 * Requests and answers carry the same id: an answer to a request the store gave up waiting for is
 * dropped. `pin` is the connection a transaction began on: the statement runs there or nowhere.
 * `retry`: the statement may run again on a new connection when its own was lost under it (a read).
 * `lossEnds`: a loss of the pinned connection is success (a rollback: the transaction died with it).
 */
export type Request = { id: number } & (
  | { kind: "query"; sql: string; params?: unknown[]; pin?: number; retry?: boolean; lossEnds?: boolean }
  | { kind: "close" }
);
export type Answer = { id: number } & (
  | { rows: Record<string, unknown>[]; rowCount: number; connection: number }
  | { error: { message: string; code?: string } }
);
export type ConnectionEvent = { kind: "lost"; error: string } | { kind: "restored"; downMs: number; attempts: number };

/** The pause before the first reconnection attempt; it doubles up to RECONNECT_MAX_MS. */
const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5_000;
/**
 * How long after a loss statements wait for the connection to come back before they fail as
 * unavailable: a blip passes unseen, and in a longer outage they fail at once (the store's caller
 * blocks while it waits, so waiting on every statement would stall the whole process).
 */
const STATEMENT_WAIT_MS = 1_000;

const { url, schema, signal, port, events } = workerData as ThreadData;
const flag = new Int32Array(signal);

// Ids and times (milliseconds) are BIGINT and sums NUMERIC: all fit a double, and rows must look as SQLite's do.
pg.types.setTypeParser(20, Number);
pg.types.setTypeParser(1700, Number);

function answer(message: Answer): void {
  port.postMessage(message);
  Atomics.add(flag, 0, 1);
  Atomics.notify(flag, 0);
}

const failure = (id: number, error: unknown): Answer => ({
  id,
  error: { message: (error as Error).message, code: (error as { code?: string }).code },
});

const unavailable = (why: string) =>
  Object.assign(new Error(`the database is unavailable (${why})`), { code: DATABASE_UNAVAILABLE });

const quoted = `"${schema}"`;
/** The connection statements run on, and its number (a transaction is pinned to one); undefined while lost. */
let live: { client: pg.Client; number: number } | undefined;
let opened = 0;
let closing = false;
/** While lost: why, since when, and the attempt under way that resolves when a connection is back. */
let outage: { since: number; error: string; attempts: number; back: Promise<void> } | undefined;

async function open(): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    // Named by schema too: an operator (or a test) can tell which Lisa on a shared server holds which connections.
    application_name: `lisa ${schema}`,
    connectionTimeoutMillis: 5_000,
    // A partition that drops packets without a reset is found by the kernel in seconds, not 15 minutes.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // A dropped connection fails the statements on it; the error event must not crash the thread.
  let why = "the connection ended";
  client.on("error", (error) => (why = error.message));
  client.on("end", () => lose(client, why));
  try {
    await client.connect();
    if (opened === 0) {
      try {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
      } catch (error) {
        // Two processes creating the schema at once: one of them meets the other's row.
        if (!["23505", "42P06"].includes((error as { code?: string }).code ?? "")) throw error;
      }
    }
    // A statement blocked for long (a lock held by a stuck writer) fails before the store's own wait
    // gives up, and a transaction left open by a frozen process does not hold the write lock for ever.
    await client.query(
      `SET search_path TO ${quoted}; SET statement_timeout = 25000; SET idle_in_transaction_session_timeout = 60000`,
    );
  } catch (error) {
    client.removeAllListeners("end");
    await client.end().catch(() => {});
    throw error;
  }
  live = { client, number: ++opened };
}

/** The connection `client` is gone: said once, and replaced with backoff until one opens. */
function lose(client: pg.Client, why: string): void {
  if (closing || live?.client !== client) return;
  live = undefined;
  const since = Date.now();
  const lost = { since, error: why, attempts: 0, back: Promise.resolve() };
  lost.back = (async () => {
    for (let wait = RECONNECT_FIRST_MS; ; wait = Math.min(wait * 2, RECONNECT_MAX_MS)) {
      await new Promise((resolve) => setTimeout(resolve, wait));
      if (closing) return;
      lost.attempts += 1;
      try {
        await open();
        outage = undefined;
        events.postMessage({ kind: "restored", downMs: Date.now() - since, attempts: lost.attempts } satisfies ConnectionEvent);
        return;
      } catch (error) {
        lost.error = (error as Error).message;
      }
    }
  })();
  outage = lost;
  client.end().catch(() => {});
  events.postMessage({ kind: "lost", error: why } satisfies ConnectionEvent);
}

/** The live connection, or one that comes back soon after a loss; throws DATABASE_UNAVAILABLE otherwise. */
async function connection(): Promise<{ client: pg.Client; number: number }> {
  const left = outage ? outage.since + STATEMENT_WAIT_MS - Date.now() : 0;
  if (!live && outage && left > 0) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([outage.back, new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
    clearTimeout(timer);
  }
  if (!live) throw unavailable(outage?.error ?? "not connected");
  return live;
}

async function query(request: Extract<Request, { kind: "query" }>): Promise<Answer> {
  if (request.pin !== undefined && live?.number !== request.pin) {
    if (request.lossEnds) return { id: request.id, rows: [], rowCount: 0, connection: request.pin };
    // The transaction died with its connection: its statements must not run outside it on another.
    throw unavailable("the connection this transaction ran on was lost");
  }
  for (let attempt = 0; ; attempt++) {
    const { client, number } = await connection();
    try {
      const result = request.params ? await client.query(request.sql, request.params) : await client.query(request.sql);
      const last = Array.isArray(result) ? result.at(-1) : result;
      return { id: request.id, rows: last?.rows ?? [], rowCount: last?.rowCount ?? 0, connection: number };
    } catch (error) {
      if (!isConnectionLoss(error)) throw error;
      lose(client, (error as Error).message);
      if (request.pin !== undefined && request.lossEnds) return { id: request.id, rows: [], rowCount: 0, connection: number };
      // A write may have been done before its answer was lost: only a read runs again, and once.
      if (request.pin !== undefined || !request.retry || attempt > 0) throw unavailable((error as Error).message);
    }
  }
}

try {
  await open();
  answer({ id: 0, rows: [], rowCount: 0, connection: 0 });
} catch (error) {
  answer(failure(0, error));
}

port.on("message", async (request: Request) => {
  if (request.kind === "close") {
    closing = true;
    await live?.client.end().catch(() => {});
    answer({ id: request.id, rows: [], rowCount: 0, connection: 0 });
    port.close();
    events.close();
    return;
  }
  try {
    answer(await query(request));
  } catch (error) {
    answer(failure(request.id, error));
  }
});
