import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { startLisaChild } from "../../dev/lisa-process.ts";
import { processesMatching } from "../../dev/processes-matching.ts";
import { testDatabaseUrl, testStoreLocation } from "../../dev/test-database.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { mountSmallDisk, type SmallDisk } from "../support/small-disk.ts";
import { trackingBody } from "../support/tracking-body.ts";

// Lisa's data directory (store, mirrors, worktrees) on a disk of a few megabytes that fills while
// a gate runs (issue 22, item 5). A full disk is a run's failure, said on the issue, not a crash
// that a supervisor would restart into the same full disk: Lisa stays up, and once space is back
// `/lisa retry` delivers the run.

const SECRET = "disk-full-secret-of-at-least-32-bytes";
const REPO = "acme/api";
/** A gate that takes long enough for the test to fill the disk while it runs; the number finds it among processes. */
const GATE = "sleep 1.371 && test -f health.ts";

let github: GitHubEmulator | undefined;
let disk: SmallDisk | undefined;
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  disk?.release();
  disk = undefined;
  await github?.stop();
  github = undefined;
});

/** An issue labeled for Lisa, who runs with its data directory on a small disk, and has reached its gate. */
async function runUntilTheGate(context: TestContext) {
  const mount = tempDir("small-disk");
  // Here a full data disk is a full store too; on PostgreSQL (npm run test:postgres) the store is
  // elsewhere, and the fault suite's disk-full faults cover Lisa on it.
  if (testDatabaseUrl(path.join(mount, "lisa")))
    return context.skip("the store is on PostgreSQL, not on the data disk this test fills");
  const mounted = await mountSmallDisk(mount, 24 * 1024 ** 2);
  if ("refused" in mounted) return context.skip(`no small file system can be mounted here: ${mounted.refused}`);
  disk = mounted;
  const emulator = createGitHubEmulator({ reposRoot: tempDir("disk-full-repos"), webhookSecret: SECRET });
  github = emulator;
  await emulator.start();
  await emulator.createRepo(REPO, { files: { "README.md": "# API\n" }, config: `label: lisa\ngates:\n  - ${GATE}\n` });
  emulator.addCollaborator(REPO, "ann", "write");
  const agent = createFakeClaude([
    { write: { "health.ts": "export const health = () => 'ok';\n" }, manifest: { title: "Add health", what: "Adds it." } },
  ]);
  const logFile = path.join(tempDir("disk-full-log"), "lisa.log");
  const dataDir = path.join(mount, "lisa");
  const start = async () => {
    const child = await startLisaChild(emulator, {
      dataDir,
      claudeBinary: agent.binary,
      secret: SECRET,
      launcher: mounted.launcher,
      logFile,
    });
    children.push(child);
    return child;
  };
  const lisa = await start();
  const issue = await emulator.createIssue(REPO, { title: "Add a health check", body: "Add health().", user: "ann" });
  await emulator.labelIssue(REPO, issue.number, "lisa", "ann");
  await waitFor("the gate to run", () => processesMatching("sleep 1.371").length > 0 || undefined, 60_000);
  return {
    disk: mounted,
    emulator,
    lisa,
    start,
    dataDir,
    tracking: () => trackingBody(emulator, REPO, issue.number),
    comment: (body: string) => emulator.commentOnIssue(REPO, issue.number, body, "ann"),
    /** Lisa's log and the issue, for a failure's message. */
    said: (error: unknown) => {
      console.log(`Lisa's log:\n${readFileSync(logFile, "utf8").slice(-6_000)}`);
      throw error;
    },
  };
}

describe("a data disk that fills during a run", () => {
  it("fails the run with a comment that says so, keeps Lisa up, and /lisa retry delivers once space is back", async (context) => {
    const { disk, emulator, lisa, dataDir, tracking, comment, said } = await runUntilTheGate(context);
    disk.fill();
    try {
      await waitFor("the run to fail", () => tracking().includes("❌ Failed") || lisa.exitCode !== null, 30_000);
      expect(lisa.exitCode, "Lisa exited").toBeNull();
      expect(tracking()).toContain("Lisa's data disk is full");
      // Still up: a webhook is answered, with a 503 while nothing can be stored (to be delivered again), and the health check too.
      await comment("/lisa status");
      await emulator.waitForWebhooks();
      expect(emulator.deliveries().at(-1)?.status).toBe(503);
      const health = await fetch(`http://127.0.0.1:${lisa.port}/healthz`);
      expect(health.status).toBe(200);
      expect(lisa.exitCode, "Lisa exited").toBeNull();
    } catch (error) {
      said(error);
    }

    disk.free();
    await comment("/lisa retry");
    await waitFor("the run to reach review", () => tracking().includes("Ready for review"), 60_000);
    expect(emulator.pulls(REPO)).toHaveLength(1);
    expect(lisa.exitCode).toBeNull();
    // Lisa's data was on the small disk, not beside it, and its store has the run in review.
    expect(readdirSync(disk.outside(path.join(dataDir, "mirrors")))).toEqual(["acme"]);
    if (!testDatabaseUrl(dataDir)) {
      const store = new Store(testStoreLocation(disk.copyOut(dataDir, ["lisa.db", "lisa.db-wal"])));
      expect(await store.runs.inState("review")).toHaveLength(1);
      await store.close();
    }
  }, 180_000);

  it("lets a Lisa restarted onto the full disk start, and resume the run it left once space is back", async (context) => {
    const { disk, emulator, lisa, start, tracking, comment, said } = await runUntilTheGate(context);
    // A supervisor restarts a Lisa that stopped mid-run, onto a disk that filled meanwhile.
    lisa.kill("SIGKILL");
    await new Promise((resolve) => lisa.once("exit", resolve));
    disk.fill();
    const again = await start().catch(said);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(again.exitCode, "the restarted Lisa exited").toBeNull();
    expect((await fetch(`http://127.0.0.1:${again.port}/healthz`)).status).toBe(200);

    disk.free();
    // The next webhook finds the disk with space: the run left running resumes.
    await comment("/lisa status");
    await waitFor("the run to reach review", () => tracking().includes("Ready for review"), 60_000);
    expect(emulator.pulls(REPO)).toHaveLength(1);
    expect(again.exitCode).toBeNull();
  }, 180_000);
});
