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
    // Integration tests share nock's global interceptors, so test files run one at a time.
    fileParallelism: false,
  },
});
