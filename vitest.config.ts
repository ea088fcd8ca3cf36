import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { FailuresReporter } from "./test/support/failures-reporter.ts";
import { LongestFirstSequencer } from "./test/support/longest-first-sequencer.ts";
import { StoreTestsReporter } from "./test/support/store-tests-reporter.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/postgres-global-setup.ts"],
    setupFiles: ["test/support/test-file-env.ts"],
    // The default output, the list of the test files that choose their store, for `npm run test:postgres`,
    // and what failed, for `npm run check`'s summary.
    reporters: ["default", new StoreTestsReporter(), new FailuresReporter()],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One test file more than there are cores (four at most), each in a process of its own (nock's
    // interceptors are per process). Files also wait (writes paced 1 s apart, leases, timers): on two
    // cores, two files at a time left the CPU idle 19 % of the run (1,317 s), three 6 % (1,059 s);
    // four ran Lisa's and the tests' deadlines out (52 timeouts in one CI run).
    fileParallelism: true,
    maxWorkers: Math.min(4, availableParallelism() + 1),
    // The fault suites' scenarios run side by side within their file, three at a time: they mostly
    // wait on writes paced 1 s apart (two at a time took 20 min, five timed out under load).
    maxConcurrency: 3,
    // The longest files first, also where there are no timings yet (a fresh checkout, as in CI).
    sequence: { sequencer: LongestFirstSequencer },
  },
});
