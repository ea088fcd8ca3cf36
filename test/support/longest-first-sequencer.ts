import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The suite's longest files, longest first (as a check on two cores timed them). A fresh checkout,
 * as CI's, has no timings of its own, and vitest then starts the largest files first: the fault
 * suites, small files that run for many minutes, came last and ran on alone while the other
 * workers stood idle.
 */
const LONGEST = [
  "test/faults/faults.test.ts",
  "test/e2e/review-loop.test.ts",
  "test/faults/scale-out-faults.test.ts",
  "test/security/hostile-inputs.test.ts",
  "test/e2e/scale-down.test.ts",
  "test/e2e/demo.test.ts",
  "test/e2e/database-reconnect.test.ts",
];

/** Vitest's order (longest first when it has timings), with the known longest files ahead of all. */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const index = LONGEST.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return index === -1 ? LONGEST.length : index;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
