import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/postgres-global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests share nock's global interceptors, so test files run one at a time.
    fileParallelism: false,
  },
});
