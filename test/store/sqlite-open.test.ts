import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";

// Processes sharing a SQLite file (a test's children, a worker started beside `lisa run`) open it
// while another holds a lock. Opening waits for the lock like every other statement does: it used
// to switch the journal mode before setting the busy timeout, and failed at once with "database is
// locked" (seen as a flaky write-slots test).

describe("opening a SQLite store", () => {
  it("waits for a lock another process holds, instead of failing at once", async () => {
    const file = path.join(tempDir("sqlite-open"), "lisa.db");
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const { DatabaseSync } = require("node:sqlite");
         const db = new DatabaseSync(${JSON.stringify(file)});
         db.exec("CREATE TABLE held (x); BEGIN EXCLUSIVE; INSERT INTO held VALUES (1)");
         console.log("held");
         setTimeout(() => db.exec("COMMIT"), 500);`,
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    const exited = new Promise((resolve) => holder.once("exit", resolve));
    await new Promise((resolve) => holder.stdout.once("data", resolve));
    const store = new Store(file);
    await store.ready();
    expect(await store.runs.inState("queued")).toEqual([]);
    await store.close();
    await exited;
  });
});
