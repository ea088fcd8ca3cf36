// `npm run check`: typecheck, lint, the suite on SQLite, then its store tests on PostgreSQL, then
// every REST request both passes sent to the GitHub emulator held to GitHub's API descriptions
// (api.github.com and GHES 3.17–3.19). The PostgreSQL pass runs even when the SQLite pass failed
// (it may fail for a reason of its own), and all results are printed at the end; the check fails
// when any part did, with the tests that failed (CI shows only parts of a long run's output).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { FAILURES_VARIABLE, type Failure } from "../dev/test-failures.ts";

/** One part of the check, and how it ended. */
interface Part {
  name: string;
  status: number;
  seconds: number;
  failures: Failure[];
}

// The SQLite pass's list of the test files that choose their store (dev/store-tests.ts), for the
// PostgreSQL pass of this same check only; removed with its folder at the end.
const listDir = mkdtempSync(path.join(tmpdir(), "lisa-check-"));
const requestsDir = path.join(listDir, "requests");
mkdirSync(requestsDir);
const env = {
  ...process.env,
  LISA_TEST_STORE_LIST: path.join(listDir, "store-tests.json"),
  LISA_RECORD_REQUESTS: requestsDir,
};
const parts: Part[] = [];
const run = (name: string, args: string[]): Part => {
  const started = Date.now();
  const failuresFile = path.join(listDir, `failures-${parts.length}.json`);
  const result = spawnSync("npm", ["run", "--silent", ...args], {
    stdio: "inherit",
    env: { ...env, [FAILURES_VARIABLE]: failuresFile },
  });
  const failures = existsSync(failuresFile) ? (JSON.parse(readFileSync(failuresFile, "utf8")) as Failure[]) : [];
  const part = { name, status: result.status ?? 1, seconds: (Date.now() - started) / 1000, failures };
  parts.push(part);
  return part;
};

try {
  // A type or lint error is the author's to fix before a test run is worth its time.
  if (run("typecheck", ["typecheck"]).status === 0 && run("lint", ["lint"]).status === 0) {
    run("tests on SQLite", ["test"]);
    run("tests on PostgreSQL", ["test:postgres", "--", "--check"]);
    run("GitHub API requests", ["validate-requests", "--", requestsDir]);
  }
} finally {
  rmSync(listDir, { recursive: true, force: true });
}
const minutes = (seconds: number) => `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
process.stdout.write("\nnpm run check:\n");
for (const part of parts) {
  process.stdout.write(`  ${part.status === 0 ? "passed" : "FAILED"}  ${part.name.padEnd(20)} ${minutes(part.seconds)}\n`);
  for (const failure of part.failures) {
    process.stdout.write(`    ${failure.file} > ${failure.test}\n      ${failure.error}\n`);
  }
}
process.exit(parts.every((part) => part.status === 0) ? 0 : 1);
