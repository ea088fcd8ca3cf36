import { beforeAll, describe, expect, it } from "vitest";
import { freshSchemaUrl, requirePostgres } from "../../dev/test-postgres.ts";
import { PostgresDriver } from "../../src/store/postgres-driver.ts";
import { sql } from "../../src/store/sql.ts";

// Issue 23: the PostgreSQL store no longer blocks the main thread while a statement waits (it
// posted each statement to a worker thread and slept in `Atomics.wait`). Webhook answers, pg-boss's
// heartbeats and timers go on beside a slow statement.

let base: string;
beforeAll(async () => {
  base = await requirePostgres();
});

describe("the PostgreSQL store", () => {
  it("lets a timer fire while a statement waits on the server", async () => {
    const db = new PostgresDriver(freshSchemaUrl(base, "test_async"));
    try {
      const order: string[] = [];
      const statement = db.all(sql`SELECT pg_sleep(1)`).then(() => order.push("statement"));
      // Due long before the statement ends: a store that blocked the thread would run it after.
      await new Promise((resolve) => setTimeout(resolve, 50));
      order.push("timer");
      await statement;
      expect(order).toEqual(["timer", "statement"]);
    } finally {
      await db.close();
    }
  });
});
