import { defineConfig } from "vitest/config";
import { StoreTestsReporter } from "./test/support/store-tests-reporter.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/postgres-global-setup.ts"],
    setupFiles: ["test/support/test-file-env.ts"],
    // The default output, and the list of the test files that choose their store, for `npm run test:postgres`.
    reporters: ["default", new StoreTestsReporter()],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Four test files at a time, each in a process of its own (nock's interceptors are per process):
    // most of a file's time is spent waiting on child processes and timers. On two cores `npm test`
    // used about 40 % of them with two files at a time; with four it took 9.5 min instead of 15.
    fileParallelism: true,
    maxWorkers: 4,
  },
});
