import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect } from "vitest";
import { CHECKOUT, RECORD_VARIABLE, TEST_FILE_VARIABLE } from "../../dev/store-tests.ts";

// Children of this test file (Lisa processes, a nested run) learn from the environment which test
// file they run for. A nested run keeps the file of the test that started it; a process that runs
// several files (vitest without isolation) names each in turn, as it set the variable itself.
const SETTER = "LISA_TEST_FILE_SETTER";
const testPath = expect.getState().testPath;
if (process.env[RECORD_VARIABLE] && (!process.env[TEST_FILE_VARIABLE] || process.env[SETTER] === String(process.pid))) {
  if (testPath) {
    process.env[TEST_FILE_VARIABLE] = path.relative(CHECKOUT, testPath);
    process.env[SETTER] = String(process.pid);
  }
}

// Each test file has a temporary directory of its own, which its folders and those of the processes
// it starts (Lisa, agents, git, PostgreSQL) go in, removed when the file ends: a test killed
// mid-way, or a process killed with SIGKILL, leaves nothing in the machine's temp directory.
const fileTemp = mkdtempSync(path.join(tmpdir(), `lisa-test-${path.basename(testPath ?? "file", ".test.ts").slice(0, 24)}-`));
// Passable, as /tmp is, by the other users tests run things as (the throwaway PostgreSQL's `nobody`).
chmodSync(fileTemp, 0o711);
process.env.TMPDIR = fileTemp;
afterAll(() => rmSync(fileTemp, { recursive: true, force: true, maxRetries: 3 }));
