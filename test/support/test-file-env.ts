import path from "node:path";
import { expect } from "vitest";
import { CHECKOUT, RECORD_VARIABLE, TEST_FILE_VARIABLE } from "../../dev/store-tests.ts";

// Each test file runs in a fresh process (vitest isolates files): its children learn from the
// environment which test file they run for. A nested run keeps the file of the test that started it.
if (process.env[RECORD_VARIABLE] && !process.env[TEST_FILE_VARIABLE]) {
  const testPath = expect.getState().testPath;
  if (testPath) process.env[TEST_FILE_VARIABLE] = path.relative(CHECKOUT, testPath);
}
