import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";
import { FAILURES_VARIABLE, type Failure } from "../../dev/test-failures.ts";

/**
 * Writes what failed to the file LISA_TEST_FAILURES names, one entry per failed test or file: CI shows only
 * parts of a long run's output, and the summary `npm run check` prints at its end is where it can be read.
 */
export class FailuresReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const target = process.env[FAILURES_VARIABLE];
    if (!target) return;
    const failures: Failure[] = [];
    for (const module of testModules) {
      const file = path.relative(process.cwd(), module.moduleId);
      for (const error of module.errors()) failures.push({ file, test: "(the file itself)", error: firstLine(error.message) });
      for (const test of module.children.allTests("failed")) {
        failures.push({ file, test: test.fullName, error: firstLine(test.result().errors?.[0]?.message) });
      }
    }
    writeFileSync(target, `${JSON.stringify(failures, null, 2)}\n`);
  }
}

const firstLine = (message: string | undefined): string => (message ?? "no message").split("\n", 1)[0]?.slice(0, 300) ?? "";
