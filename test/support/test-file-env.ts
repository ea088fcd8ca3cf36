import path from "node:path";
import { expect } from "vitest";
import { CHECKOUT, RECORD_VARIABLE, TEST_FILE_VARIABLE } from "../../dev/store-tests.ts";

// Children of this test file (Lisa processes, a nested run) learn from the environment which test
// file they run for. A nested run keeps the file of the test that started it; a process that runs
// several files (vitest without isolation) names each in turn, as it set the variable itself.
const SETTER = "LISA_TEST_FILE_SETTER";
if (process.env[RECORD_VARIABLE] && (!process.env[TEST_FILE_VARIABLE] || process.env[SETTER] === String(process.pid))) {
  const testPath = expect.getState().testPath;
  if (testPath) {
    process.env[TEST_FILE_VARIABLE] = path.relative(CHECKOUT, testPath);
    process.env[SETTER] = String(process.pid);
  }
}
