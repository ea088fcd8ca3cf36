import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CHECKOUT, StoreTestsList, storeFreeTests } from "../../dev/store-tests.ts";
import { tempDir } from "../support/git-fixtures.ts";

// `npm run test:postgres` leaves out the test files the last passing `npm test` saw run without
// choosing a store by LISA_TEST_DATABASE_URL (dev/store-tests.ts). These check that the list is
// right, and that nothing can choose a store behind its back.

const STORE_TEST = "test/store/store.test.ts";
const PURE_TEST = "test/markdown/live-text.test.ts";

/** Runs vitest from the checkout on `files` with the suite's config, as a run of its own unless `env` says otherwise. */
function vitest(args: string[], env: Record<string, string>): Promise<{ status: number | null; output: string }> {
  const own: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["LISA_TEST_FILE", "LISA_TEST_STORE_RECORD", "LISA_TEST_DATABASE_URL"]) delete own[name];
  const child = spawn("npx", ["vitest", "run", ...args], {
    cwd: CHECKOUT,
    env: { ...own, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, output })));
}

describe("the list of the test files that choose their store", () => {
  it("a passing run lists the files that chose their store by LISA_TEST_DATABASE_URL, and the others as store-free", async () => {
    const list = path.join(tempDir("store-tests"), "list.json");
    const before = Date.now();
    const { status, output } = await vitest([STORE_TEST, PURE_TEST], { LISA_TEST_STORE_LIST: list });
    expect(status, output).toBe(0);
    const written = StoreTestsList.parse(JSON.parse(readFileSync(list, "utf8")));
    expect(written).toEqual({ startedAt: expect.any(Number), store: [STORE_TEST], storeFree: [PURE_TEST] });
    expect(written.startedAt).toBeGreaterThanOrEqual(before);
  });

  it("a run a test starts notes its choices for that test's file, in the outer run's record, and lists nothing", async () => {
    const dir = tempDir("store-tests");
    const record = path.join(dir, "outer.record");
    writeFileSync(record, "");
    const outer = "test/e2e/outer.test.ts";
    const { status, output } = await vitest([STORE_TEST], {
      LISA_TEST_STORE_LIST: path.join(dir, "list.json"),
      LISA_TEST_STORE_RECORD: record,
      LISA_TEST_FILE: outer,
    });
    expect(status, output).toBe(0);
    expect(readFileSync(record, "utf8")).toBe(`${outer}\n`);
    expect(existsSync(path.join(dir, "list.json"))).toBe(false);
  });

  it("the PostgreSQL pass leaves out only the store-free files of a list no file of the checkout is newer than", () => {
    const list = path.join(tempDir("store-tests"), "list.json");
    const said: string[] = [];
    expect(storeFreeTests((line) => said.push(line), list)).toEqual([]);
    const fresh: StoreTestsList = { startedAt: Date.now(), store: [STORE_TEST], storeFree: [PURE_TEST] };
    writeFileSync(list, JSON.stringify(fresh));
    expect(storeFreeTests((line) => said.push(line), list)).toEqual([PURE_TEST]);
    writeFileSync(list, JSON.stringify({ ...fresh, startedAt: 0 }));
    expect(storeFreeTests((line) => said.push(line), list)).toEqual([]);
    expect(said).toEqual([
      `the whole suite: no list of the test files that choose their store at ${list} (an npm test that runs to its end writes it)`,
      `the 1 test files npm test saw choose their store by LISA_TEST_DATABASE_URL, and any it did not run; not the 1 it saw pass without choosing one (${list})`,
      expect.stringMatching(/^the whole suite: \S+ changed after the npm test that listed the test files choosing their store$/),
    ]);
  });

  it("only dev/test-database.ts chooses a store by LISA_TEST_DATABASE_URL: a test reading it itself would choose unnoted", () => {
    // Each of these reads it for the whole run, not for a test file, sets it for a run of its own, or names it.
    const allowed = new Set([
      "dev/test-database.ts",
      "dev/store-tests.ts",
      "dev/test-postgres.ts",
      "scripts/test-postgres.ts",
      "test/support/postgres-global-setup.ts",
      "test/support/store-tests-reporter.ts",
      "test/ci/throwaway-postgres.test.ts",
      "test/ci/store-tests.test.ts",
    ]);
    const readers: string[] = [];
    const visit = (dir: string) => {
      for (const entry of readdirSync(path.join(CHECKOUT, dir), { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) visit(file);
        else if (/\.[cm]?[jt]s$/.test(entry.name) && !allowed.has(file)) {
          const code = readFileSync(path.join(CHECKOUT, file), "utf8")
            .split("\n")
            .filter((line) => !/^\s*(\/\/|\/?\*)/.test(line));
          if (code.some((line) => line.includes("LISA_TEST_DATABASE_URL"))) readers.push(file);
        }
      }
    };
    for (const dir of ["src", "dev", "test", "scripts", "emulator"]) visit(dir);
    expect(readers).toEqual([]);
  });
});
