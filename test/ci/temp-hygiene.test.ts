import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CHECKOUT } from "../../dev/store-tests.ts";
import { tempDir } from "../support/git-fixtures.ts";

// .ci/run fails when the check leaves lisa-* entries in the temp directory; a test file's own
// folders, and those of the processes it starts and kills, must go with it.
describe("a test file's temporary folders", () => {
  it("are gone when it ends, those of the Lisa processes it starts and kills included", () => {
    const temp = tempDir("hygiene");
    const own: NodeJS.ProcessEnv = { ...process.env, TMPDIR: temp, LISA_TEST_STORE_LIST: path.join(tempDir("list"), "l.json") };
    for (const name of ["LISA_TEST_FILE", "LISA_TEST_STORE_RECORD"]) delete own[name];
    // Emulated repositories, data directories and port folders, and a child that is killed.
    const run = spawnSync("npx", ["vitest", "run", "test/faults/lisa-start.test.ts"], {
      cwd: CHECKOUT,
      env: own,
      encoding: "utf8",
    });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(readdirSync(temp).filter((name) => name.startsWith("lisa-"))).toEqual([]);
  });
});
