import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { EnvError, type LisaSettings, settingsFromEnv } from "../../config/env-schema.ts";
import { checkSandbox } from "../../sandbox/check-sandbox.ts";
import type { Check } from "./check.ts";

/** The LISA_* and GHE_* settings, and what they name: the sandbox, the data directory, the PostgreSQL store. */
export async function environmentChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  const checks: Check[] = [];
  let settings: LisaSettings | undefined;
  try {
    settings = settingsFromEnv(env);
    checks.push({ name: "environment", status: "ok", detail: "every LISA_* and GHE_* variable is valid" });
  } catch (error) {
    if (!(error instanceof EnvError)) throw error;
    checks.push({
      name: "environment",
      status: "FAIL",
      detail: error.message.replaceAll("\n", "; "),
      fix: "Fix those variables.",
    });
  }
  if (settings) {
    const problem = settings.sandbox.mode === "off" ? undefined : await checkSandbox(settings.sandbox);
    checks.push(
      settings.sandbox.mode === "off"
        ? {
            name: "sandbox",
            status: "warn",
            detail: "LISA_SANDBOX=off: agents run unconfined",
            fix: "Unset LISA_SANDBOX unless agents, issues and repositories are all trusted.",
          }
        : problem
          ? {
              name: "sandbox",
              status: "FAIL",
              detail: problem.split(". ")[0] ?? problem,
              fix: "See docs/security-model.md, “What a deployment needs”.",
            }
          : { name: "sandbox", status: "ok", detail: "bubblewrap runs a process in its own namespaces" },
    );
    checks.push(await dataDirCheck(settings.dataDir));
    if (settings.databaseUrl) checks.push(await databaseCheck(settings.databaseUrl));
  }
  return checks;
}

/** The PostgreSQL store DATABASE_URL names answers a query, within a few seconds. */
async function databaseCheck(url: string): Promise<Check> {
  // The URL may hold a password: only its host, port and database are shown.
  const parsed = URL.parse(url);
  if (!parsed)
    return {
      name: "database",
      status: "FAIL",
      detail: "DATABASE_URL is not a URL",
      fix: "Write it as postgres://user@host:5432/database.",
    };
  const where = `${parsed.host}${parsed.port ? "" : ":5432"}${parsed.pathname}`;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000, query_timeout: 5_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>("SHOW server_version");
    return { name: "database", status: "ok", detail: `PostgreSQL ${rows[0]?.server_version ?? "?"} at ${where}` };
  } catch (error) {
    return {
      name: "database",
      status: "FAIL",
      detail: `PostgreSQL at ${where} did not answer: ${(error as Error).message}`,
      fix: "Start PostgreSQL there or correct DATABASE_URL; without DATABASE_URL, `lisa all` keeps its store in SQLite.",
    };
  } finally {
    await client.end().catch(() => {});
  }
}

/** Lisa's data directory exists or can be made, and Lisa's user can write in it. */
async function dataDirCheck(dir: string): Promise<Check> {
  const probe = path.join(dir, `.lisa-doctor-${process.pid}`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(probe, "");
    await rm(probe);
    return { name: "data directory", status: "ok", detail: `${dir} is writable` };
  } catch (error) {
    return {
      name: "data directory",
      status: "FAIL",
      detail: `${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      fix: "Set LISA_DATA_DIR to a folder Lisa's user can write (the Docker image uses the /data volume).",
    };
  }
}
