import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { requirePostgres } from "../../dev/test-postgres.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { startLisaChild } from "../support/lisa-child.ts";

// `lisa web` and a `lisa worker` on PostgreSQL lose every connection they hold, three times in a
// row, while a run's agent works (pg_terminate_backend, as a failover or an operator would): both
// processes stay up and reconnect, a webhook after the loss is stored, and runs reach review with no
// restart counted (a third counted restart would have failed the run).

const SECRET = "reconnect-secret";
const REPO = "acme/api";
let baseUrl = "";
beforeAll(async () => {
  baseUrl = await requirePostgres();
});

const children: ChildProcess[] = [];
let github: GitHubEmulator | undefined;
let database: string | undefined;
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  await github?.stop();
  if (database) await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  database = undefined;
});

/** Runs `sql` on the test server's own database, as its superuser. */
async function admin(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** Ends every connection Lisa (its store's and pg-boss's) holds to `database`, and says how many. */
async function terminateLisa(database: string): Promise<number> {
  const { rowCount } = await admin(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'lisa%'",
    [database],
  );
  return rowCount ?? 0;
}

async function get(port: number, what: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${what}`);
  return { status: response.status, body: await response.text() };
}

describe("lisa web and a lisa worker when PostgreSQL ends their connections", () => {
  it("stay up, reconnect, store the webhooks after it, and finish the runs without counting a restart", async () => {
    // The first session (the run under way during the losses) takes a few seconds; the next is instant.
    const agent = createFakeClaude([
      { run: ["sleep 6"], write: { "change.txt": "done\n" }, manifest: { title: "Make the change", what: "Makes it." } },
      { write: { "change.txt": "done\n" }, manifest: { title: "Make the change", what: "Makes it." } },
    ]);
    github = createGitHubEmulator({ reposRoot: tempDir("reconnect-repos"), webhookSecret: SECRET });
    await github.start();
    await github.createRepo(REPO, { files: { "README.md": "# api\n" }, config: "label: lisa\ngates:\n  - test -f change.txt\n" });
    github.addCollaborator(REPO, "ann", "write");
    // A database of its own: the connections ended are this test's Lisas' only.
    database = `reconnect_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    await admin(`CREATE DATABASE ${database}`);
    const url = new URL(baseUrl);
    url.pathname = `/${database}`;
    const databaseUrl = url.toString();

    const logs = process.env.LISA_SCALE_LOGS ?? tempDir("reconnect-logs");
    const worker = await startLisaChild(github, {
      dataDir: path.join(tempDir("reconnect-w1"), "lisa"),
      claudeBinary: agent.binary,
      secret: SECRET,
      databaseUrl,
      role: "worker",
      workerName: "w1",
      leaseSeconds: 10,
      receivesWebhooks: false,
      logFile: path.join(logs, "w1.log"),
    });
    children.push(worker);
    const web = await startLisaChild(github, {
      dataDir: path.join(tempDir("reconnect-web"), "lisa"),
      claudeBinary: agent.binary,
      secret: SECRET,
      databaseUrl,
      role: "web",
      logFile: path.join(logs, "web.log"),
    });
    children.push(web);
    const pids = [worker.pid, web.pid];

    const first = await github.createIssue(REPO, { title: "Change under way", body: "", user: "ann" });
    expect((await github.labelIssue(REPO, first.number, "lisa", "ann")).status).toBe(200);
    await waitFor("the first agent session to start", () => agent.calls().length > 0, 60_000);

    const ended: number[] = [];
    for (let blip = 0; blip < 3; blip++) {
      ended.push(await terminateLisa(database));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }

    // A webhook right after: stored (2xx), or refused with 503 while the database was away and
    // stored when delivered again.
    const second = await github.createIssue(REPO, { title: "Change after the losses", body: "", user: "ann" });
    let delivery = await github.labelIssue(REPO, second.number, "lisa", "ann");
    if (delivery.status === 503) delivery = await github.redeliver(delivery.id);
    expect(delivery.status).toBe(200);
    expect((await get(web.port, "/healthz")).status).toBe(200);

    const store = new Store(databaseUrl);
    try {
      await waitFor("both runs to reach review", () => store.runsIn("review").length === 2 || undefined, 120_000);
      const runs = store.runsIn("review");
      expect(runs.map((run) => [run.issue_number, run.restarts, run.worker])).toEqual(
        expect.arrayContaining([
          [first.number, 0, "w1"],
          [second.number, 0, "w1"],
        ]),
      );
      expect(github.pulls(REPO)).toHaveLength(2);
    } finally {
      store.close();
    }

    // Each loss ended the connections the processes had opened again after the one before.
    expect(
      ended.every((n) => n > 0),
      `connections ended at each loss: ${ended}`,
    ).toBe(true);
    // Both processes are the ones started before the losses, still serving.
    expect(children.map((child) => [child.pid, child.exitCode, child.signalCode])).toEqual(pids.map((pid) => [pid, null, null]));
    for (const child of [web, worker]) {
      expect((await get(child.port, "/healthz")).status).toBe(200);
      const metrics = (await get(child.port, "/metrics")).body;
      expect(Number(/^lisa_database_reconnects_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
    }
  }, 240_000);
});
