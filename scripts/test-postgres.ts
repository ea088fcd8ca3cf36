// The whole suite again on PostgreSQL (`npm run test:postgres`, part of `npm run check`): every
// store a test opens gets a schema of its own in LISA_TEST_DATABASE_URL's database (see
// dev/test-database.ts). Schemas a previous pass left are dropped first.
import { spawnSync } from "node:child_process";
import pg from "pg";

const url = process.env.LISA_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
try {
  await client.connect();
} catch (error) {
  process.stderr.write(
    `test:postgres needs PostgreSQL at ${url} (${(error as Error).message}).\n` +
      "Start one, or point LISA_TEST_DATABASE_URL at one whose user may create schemas.\n",
  );
  process.exit(1);
}
const { rows } = await client.query<{ nspname: string }>(
  "SELECT nspname FROM pg_namespace WHERE nspname ~ '^(test|scale|shape|bench)_'",
);
for (const { nspname } of rows) await client.query(`DROP SCHEMA "${nspname}" CASCADE`);
await client.end();

const result = spawnSync("npx", ["vitest", "run", ...process.argv.slice(2)], {
  stdio: "inherit",
  env: { ...process.env, LISA_TEST_DATABASE_URL: url },
});
process.exit(result.status ?? 1);
