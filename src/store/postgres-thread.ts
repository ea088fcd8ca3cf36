// The PostgreSQL connection of one store, in a worker thread: the store's API is synchronous (as
// SQLite's is), so the main thread posts a statement and sleeps on a shared flag until this thread,
// which runs node-postgres's asynchronous client, posts the answer and raises the flag.
import { type MessagePort, workerData } from "node:worker_threads";
import pg from "pg";

export interface ThreadData {
  url: string;
  schema: string;
  /** Counts the answers posted (and is notified at each), so the store can sleep until the next one. */
  signal: SharedArrayBuffer;
  port: MessagePort;
}

/** Requests and answers carry the same id: an answer to a request the store gave up waiting for is dropped. */
export type Request = { id: number } & ({ kind: "query"; sql: string; params?: unknown[] } | { kind: "close" });
export type Answer = { id: number } & (
  | { rows: Record<string, unknown>[]; rowCount: number }
  | { error: { message: string; code?: string } }
);

const { url, schema, signal, port } = workerData as ThreadData;
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

const client = new pg.Client({ connectionString: url, application_name: "lisa" });
// A dropped connection fails the statements after it; the error event must not crash the thread.
client.on("error", () => {});

const quoted = `"${schema}"`;
try {
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
  } catch (error) {
    // Two processes creating the schema at once: one of them meets the other's row.
    if (!["23505", "42P06"].includes((error as { code?: string }).code ?? "")) throw error;
  }
  // A statement blocked for long (a lock held by a stuck writer) fails before the store's own wait
  // gives up, and a transaction left open by a frozen process does not hold the write lock for ever.
  await client.query(
    `SET search_path TO ${quoted}; SET statement_timeout = 25000; SET idle_in_transaction_session_timeout = 60000`,
  );
  answer({ id: 0, rows: [], rowCount: 0 });
} catch (error) {
  answer(failure(0, error));
}

port.on("message", async (request: Request) => {
  if (request.kind === "close") {
    await client.end().catch(() => {});
    answer({ id: request.id, rows: [], rowCount: 0 });
    port.close();
    return;
  }
  try {
    const result = request.params ? await client.query(request.sql, request.params) : await client.query(request.sql);
    const last = Array.isArray(result) ? result.at(-1) : result;
    answer({ id: request.id, rows: last?.rows ?? [], rowCount: last?.rowCount ?? 0 });
  } catch (error) {
    answer(failure(request.id, error));
  }
});
