import { DEFAULT_TEST_POSTGRES_URL, testPostgres } from "../../dev/test-postgres.ts";

// Once per test run, before any test file: the tests that need PostgreSQL get the one at
// LISA_TEST_DATABASE_URL (or the default URL) when it answers, else a throwaway server stopped at
// the end. Test processes inherit what this sets in process.env.
export default async function setup(): Promise<() => Promise<void>> {
  const suiteOnPostgres = process.env.LISA_TEST_DATABASE_URL;
  const wanted = suiteOnPostgres ?? DEFAULT_TEST_POSTGRES_URL;
  try {
    const postgres = await testPostgres(wanted, (line) => process.stderr.write(`${line}\n`));
    process.env.LISA_TEST_POSTGRES_URL = postgres.url;
    if (suiteOnPostgres) process.env.LISA_TEST_DATABASE_URL = postgres.url;
    return postgres.stop;
  } catch (error) {
    // On SQLite only a few tests need PostgreSQL: they fail saying why; the rest still run.
    if (suiteOnPostgres) throw error;
    process.env.LISA_TEST_POSTGRES_URL = wanted;
    process.env.LISA_TEST_POSTGRES_PROBLEM = `Starting a throwaway PostgreSQL failed: ${(error as Error).message}`;
    return async () => {};
  }
}
