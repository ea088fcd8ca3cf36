import { createHash } from "node:crypto";
import path from "node:path";
import { noteStoreChoice } from "./store-tests.ts";

/**
 * Where a test's store lives. `LISA_TEST_DATABASE_URL` (set by `npm run test:postgres`) runs the
 * suite on PostgreSQL: each data directory gets its own schema, named after the directory, so a
 * child process, a restarted Lisa and the test that inspects its store all meet the same rows.
 * Without it, the SQLite file in the data directory, as Lisa keeps it by default. Every choice is
 * noted, so that the PostgreSQL pass runs the test files that make one (dev/store-tests.ts).
 */
export function testStoreLocation(dataDir: string): string {
  return testDatabaseUrl(dataDir) ?? path.join(dataDir, "lisa.db");
}

/** The PostgreSQL URL of a data directory's schema, or undefined when the suite runs on SQLite. */
export function testDatabaseUrl(dataDir: string): string | undefined {
  noteStoreChoice();
  const base = process.env.LISA_TEST_DATABASE_URL;
  if (!base) return undefined;
  const url = new URL(base);
  const digest = createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 20);
  url.searchParams.set("schema", `test_${digest}`);
  return url.toString();
}
