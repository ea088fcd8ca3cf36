import { spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/git-fixtures.ts";

const CHECK = fileURLToPath(new URL("../../scripts/check.ts", import.meta.url));

/**
 * Runs scripts/check.ts with an `npm` that notes each script it is asked for and fails `failing`, each failing
 * one reporting one failed test where the suite's reporter would (LISA_TEST_FAILURES).
 */
function checkWith(failing: string[]) {
  const bin = tempDir("check-npm");
  const calls = path.join(bin, "calls");
  writeFileSync(calls, "");
  writeFileSync(
    path.join(bin, "npm"),
    `#!/bin/sh\n# npm run --silent <script>\necho "$3" >>"${calls}"\ncase " ${failing.join(" ")} " in *" $3 "*)\n` +
      `  printf '[{"file":"test/%s.test.ts","test":"a test > of %s","error":"expected 1 to be 2"}]' "$3" "$3" >"$LISA_TEST_FAILURES"\n` +
      "  exit 1;;\nesac\n",
  );
  chmodSync(path.join(bin, "npm"), 0o755);
  const result = spawnSync(process.execPath, ["--disable-warning=ExperimentalWarning", CHECK], {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
    encoding: "utf8",
  });
  return { ...result, calls: readFileSync(calls, "utf8").trim().split("\n") };
}

describe("npm run check", () => {
  it("runs the PostgreSQL pass when the SQLite pass failed, prints both results, and fails", () => {
    const { status, stdout, calls } = checkWith(["test"]);
    expect(calls).toEqual(["typecheck", "lint", "test", "test:postgres", "validate-requests"]);
    expect(stdout).toMatch(
      /FAILED {2}tests on SQLite +\d+ min \d+ s\n {4}test\/test\.test\.ts > a test > of test\n {6}expected 1 to be 2\n {2}passed {2}tests on PostgreSQL/,
    );
    expect(status).toBe(1);
  });

  it("passes when every part does, and fails when only the PostgreSQL pass did", () => {
    expect(checkWith([]).status).toBe(0);
    const postgresOnly = checkWith(["test:postgres"]);
    expect(postgresOnly.stdout).toMatch(/passed {2}tests on SQLite[^\n]*\n {2}FAILED {2}tests on PostgreSQL/);
    expect(postgresOnly.status).toBe(1);
  });

  it("fails when the suite's requests to the emulator are not ones GitHub's API descriptions take", () => {
    const { status, stdout } = checkWith(["validate-requests"]);
    expect(stdout).toMatch(/passed {2}tests on PostgreSQL[^\n]*\n {2}FAILED {2}GitHub API requests/);
    expect(status).toBe(1);
  });

  it("runs no tests after a type error", () => {
    const { status, calls } = checkWith(["typecheck"]);
    expect(calls).toEqual(["typecheck"]);
    expect(status).toBe(1);
  });
});
