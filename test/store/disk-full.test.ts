import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { GitError } from "../../src/errors.ts";
import { isDiskFull } from "../../src/store/disk-full.ts";

describe("isDiskFull", () => {
  it("knows a full disk by the file system's code, SQLite's code, and git's words, also as a cause", () => {
    expect(isDiskFull(Object.assign(new Error("write failed"), { code: "ENOSPC" }))).toBe(true);
    expect(isDiskFull(Object.assign(new Error("write failed"), { code: "EDQUOT" }))).toBe(true);
    expect(isDiskFull(Object.assign(new Error("database or disk is full"), { code: "ERR_SQLITE_ERROR", errcode: 13 }))).toBe(
      true,
    );
    expect(isDiskFull(new GitError("git commit failed: fatal: write error: No space left on device"))).toBe(true);
    expect(isDiskFull(new Error("run failed", { cause: Object.assign(new Error("x"), { code: "ENOSPC" }) }))).toBe(true);
  });

  it("takes no other failure for one", () => {
    expect(isDiskFull(new GitError("git push failed: rejected"))).toBe(false);
    expect(isDiskFull(Object.assign(new Error("no such file"), { code: "ENOENT" }))).toBe(false);
    expect(isDiskFull(undefined)).toBe(false);
    const db = new DatabaseSync(":memory:");
    db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    db.exec("INSERT INTO t VALUES (1)");
    let unique: unknown;
    try {
      db.exec("INSERT INTO t VALUES (1)");
    } catch (error) {
      unique = error;
    }
    expect(unique).toBeDefined();
    expect(isDiskFull(unique)).toBe(false);
  });
});
