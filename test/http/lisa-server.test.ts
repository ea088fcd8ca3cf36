import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { freePort } from "../../dev/free-port.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { signature } from "../../emulator/webhooks.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { isAlive } from "../support/process-alive.ts";

// Lisa as `npm start` runs it (src/main.ts: the HTTP server Lisa creates, Probot's middleware mounted
// on it) against the GitHub emulator: what it answers, what it stores, and how it stops.

const MAIN = fileURLToPath(new URL("../../src/main.ts", import.meta.url));
const SECRET = "lisa-server-test-secret-of-at-least-32-bytes";
const REPO = "acme/api";
const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs1", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

const agent = createFakeClaude([
  { write: { "health.ts": "half\n" }, hang: true },
  { write: { "health.ts": "more\n" }, hang: true },
  { write: { "health.ts": "done\n" }, manifest: { title: "Add health", what: "Adds it." } },
]);
const dataDir = path.join(tempDir("lisa-server-data"), "lisa");
let github: GitHubEmulator;
let lisa: ChildProcess & { output: string; url: string };

/** `npm start` on `dataDir`, with the emulator's webhooks pointed at it once it listens. */
async function startLisa() {
  const home = tempDir("lisa-server-home");
  const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", MAIN], {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      APP_ID: "1",
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: SECRET,
      GHE_HOST: new URL(github.url).host,
      GHE_PROTOCOL: "http",
      HOST: "127.0.0.1",
      PORT: String(await freePort()),
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
      LISA_DATA_DIR: dataDir,
      LISA_CLAUDE_PATH: agent.binary,
      LISA_CONCURRENCY: "1",
      LISA_SHUTDOWN_GRACE: "1s",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const started = Object.assign(child, { output: "", url: "" });
  child.stdout?.on("data", (chunk: Buffer) => (started.output += chunk));
  child.stderr?.on("data", (chunk: Buffer) => (started.output += chunk));
  started.url = await waitFor(
    `Lisa to listen:\n${started.output}`,
    () => /Listening on (http:\/\/[\d.]+:\d+)/.exec(started.output)?.[1],
  );
  github.setWebhookUrl(`${started.url}/api/github/webhooks`);
  return started;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve(child.exitCode)));

/** The delivery ids Lisa stored, read once it has exited. */
function storedDeliveries(): string[] {
  const db = new DatabaseSync(path.join(dataDir, "lisa.db"), { readOnly: true });
  const rows = db.prepare("SELECT delivery_id FROM commands ORDER BY id").all() as { delivery_id: string }[];
  db.close();
  return rows.map((row) => row.delivery_id);
}

beforeAll(async () => {
  github = createGitHubEmulator({ reposRoot: tempDir("lisa-server-repos"), webhookSecret: SECRET, ghes: true });
  await github.start();
  await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\ngates:\n  - test -f health.ts\n" });
  github.addCollaborator(REPO, "ann", "write");
  lisa = await startLisa();
}, 60_000);

afterAll(async () => {
  if (lisa?.exitCode === null) lisa.kill("SIGKILL");
  await github?.stop();
});

describe("the HTTP server `npm start` creates", () => {
  it("answers 404 on any path but the webhook path and Lisa's own endpoints", async () => {
    expect((await fetch(`${lisa.url}/elsewhere`)).status).toBe(404);
    expect((await fetch(`${lisa.url}/elsewhere`, { method: "POST", body: "{}" })).status).toBe(404);
    expect((await fetch(`${lisa.url}/healthz`)).status).toBe(200);
  });

  it("refuses a webhook signed with another secret, and stores nothing of it", async () => {
    const body = JSON.stringify({ action: "labeled", label: { name: "lisa" }, issue: { number: 99 } });
    const answer = await fetch(`${lisa.url}/api/github/webhooks`, {
      method: "POST",
      body,
      headers: {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": "forged-delivery",
        "x-hub-signature-256": signature("not-the-secret", body),
      },
    });
    expect(answer.status).toBe(400);
  });

  it("stores a signed label webhook and starts its run", async () => {
    const issue = await github.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
    const delivery = await github.labelIssue(REPO, issue.number, "lisa", "ann");
    expect(delivery.status).toBe(200);
    await waitFor(`the agent to start:\n${lisa.output}`, () => agent.hangingPids());
  });

  it("answers 400, not 500, to a signed delivery whose payload lacks what its event always carries", async () => {
    const post = (event: string, payload: object) => {
      const body = JSON.stringify(payload);
      return fetch(`${lisa.url}/api/github/webhooks`, {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "x-github-event": event,
          "x-github-delivery": `malformed-${event}`,
          "x-hub-signature-256": signature(SECRET, body),
        },
      });
    };
    expect((await post("status", { sha: "abc", state: "success" })).status).toBe(400);
    expect((await post("check_run", { action: "completed", repository: { name: "api", owner: { login: "acme" } } })).status).toBe(
      400,
    );
    expect((await post("issues", { action: "labeled", label: { name: "lisa" } })).status).toBe(400);
  });

  it("on SIGINT hands the run back within the grace, leaves no agent running, stops listening and exits 0", async () => {
    const pids = agent.hangingPids() ?? [];
    expect(pids.length).toBeGreaterThan(0);
    lisa.kill("SIGINT");
    expect(await exited(lisa)).toBe(0);
    expect(pids.filter(isAlive)).toEqual([]);
    expect(lisa.output).toContain("runs handed back to resume");
    await expect(fetch(`${lisa.url}/healthz`)).rejects.toThrow();
  }, 30_000);

  it("on SIGTERM still stores the webhooks of the grace period, then stops listening and exits 0", async () => {
    lisa = await startLisa();
    // The run handed back resumes: the agent's second session hangs in its turn.
    await waitFor(`the run to resume:\n${lisa.output}`, () => agent.hangingPids());
    lisa.kill("SIGTERM");
    const issue = await github.createIssue(REPO, { title: "Add a readiness endpoint", body: "", user: "ann" });
    const during = await github.labelIssue(REPO, issue.number, "lisa", "ann");
    expect(during.status).toBe(200);
    expect(await exited(lisa)).toBe(0);
    await expect(fetch(`${lisa.url}/healthz`)).rejects.toThrow();

    // Both `lisa` labels, the one before the first stop and the one during this grace.
    const labeled = github
      .deliveries()
      .filter(
        (d) => d.action === "labeled" && (d.payload.label as { name?: string } | undefined)?.name === "lisa" && d.status === 200,
      );
    expect(labeled.map((d) => d.id)).toContain(during.id);
    expect(labeled).toHaveLength(2);
    expect(storedDeliveries()).toEqual(expect.arrayContaining(labeled.map((d) => d.id)));
    expect(storedDeliveries()).not.toContain("forged-delivery");
  }, 60_000);
});
