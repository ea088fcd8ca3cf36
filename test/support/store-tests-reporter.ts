import { renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Reporter, TestModule, TestRunEndReason, Vitest } from "vitest/node";
import {
  CHECKOUT,
  notedFiles,
  RECORD_VARIABLE,
  type StoreTestsList,
  storeTestsListPath,
  TEST_FILE_VARIABLE,
  UNKNOWN_TEST_FILE,
} from "../../dev/store-tests.ts";

/**
 * Lists, at the end of a run of the suite on SQLite that ran to its end, which test files chose their store
 * by LISA_TEST_DATABASE_URL and which ran without choosing one (see dev/store-tests.ts).
 */
export class StoreTestsReporter implements Reporter {
  private recording: { record: string; list: string; startedAt: number } | undefined;

  onInit(vitest: Vitest): void {
    // Not the PostgreSQL pass, nor a run a test started (it notes for that test's file).
    if (process.env.LISA_TEST_DATABASE_URL || process.env[TEST_FILE_VARIABLE] || vitest.config.watch) return;
    const list = storeTestsListPath();
    // An older list must not outlive a run that cannot replace it.
    rmSync(list, { force: true });
    // Tests left out by name prove nothing about their files.
    if (vitest.config.testNamePattern) return;
    const record = `${list}.record`;
    writeFileSync(record, "");
    this.recording = { record, list, startedAt: Date.now() };
    process.env[RECORD_VARIABLE] = record;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, _errors: unknown, reason: TestRunEndReason): void {
    const recording = this.recording;
    if (!recording) return;
    this.recording = undefined;
    delete process.env[RECORD_VARIABLE];
    const noted = notedFiles(recording.record);
    rmSync(recording.record, { force: true });
    // A failed run lists too: a file that failed is never store-free, so the PostgreSQL pass runs it.
    if (reason === "interrupted") return;
    if (noted.has(UNKNOWN_TEST_FILE)) {
      process.stderr.write("A store was chosen outside any known test file: the PostgreSQL pass will run every test file.\n");
      return;
    }
    const ran = testModules.map((module) => ({ file: path.relative(CHECKOUT, module.moduleId), state: module.state() }));
    const list: StoreTestsList = {
      startedAt: recording.startedAt,
      storeFree: ran
        .filter(({ file, state }) => !noted.has(file) && (state === "passed" || state === "skipped"))
        .map(({ file }) => file),
      store: ran.filter(({ file }) => noted.has(file)).map(({ file }) => file),
    };
    writeFileSync(`${recording.list}.tmp`, `${JSON.stringify(list, null, 2)}\n`);
    renameSync(`${recording.list}.tmp`, recording.list);
  }
}
