import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { processesMatching } from "../../dev/processes-matching.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { startLisaChild } from "../support/lisa-child.ts";
import { mountSmallDisk, type SmallDisk } from "../support/small-disk.ts";
import { trackingBody } from "../support/tracking-body.ts";

// Lisa's data directory (store, mirrors, worktrees) on a disk of a few megabytes that fills while
// a gate runs (issue 22, item 5). A full disk is a run's failure, said on the issue, not a crash
// that a supervisor would restart into the same full disk: Lisa stays up, and once space is back
// `/lisa retry` delivers the run.

const SECRET = "disk-full-secret";
const REPO = "acme/api";
/** A gate that takes long enough for the test to fill the disk while it runs; the number finds it among processes. */
const GATE = "sleep 1.371 && test -f health.ts";

let github: GitHubEmulator | undefined;
let disk: SmallDisk | undefined;
const children: { kill(signal: NodeJS.Signals): void }[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  disk?.release();
  disk = undefined;
  await github?.stop();
  github = undefined;
});

describe("a data disk that fills during a run", () => {
  it("fails the run with a comment that says so, keeps Lisa up, and /lisa retry delivers once space is back", async (context) => {
    const mount = tempDir("small-disk");
    const mounted = await mountSmallDisk(mount, 24 * 1024 ** 2);
    if ("refused" in mounted) return context.skip(`no small file system can be mounted here: ${mounted.refused}`);
    disk = mounted;
    github = createGitHubEmulator({ reposRoot: tempDir("disk-full-repos"), webhookSecret: SECRET });
    await github.start();
    await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: `label: lisa\ngates:\n  - ${GATE}\n` });
    github.addCollaborator(REPO, "ann", "write");
    const agent = createFakeClaude([
      { write: { "health.ts": "export const health = () => 'ok';\n" }, manifest: { title: "Add health", what: "Adds it." } },
    ]);
    const logFile = path.join(tempDir("disk-full-log"), "lisa.log");
    const dataDir = path.join(mount, "lisa");
    const lisa = await startLisaChild(github, {
      dataDir,
      claudeBinary: agent.binary,
      secret: SECRET,
      launcher: mounted.launcher,
      logFile,
    });
    children.push(lisa);
    const emulator = github;
    const issue = await emulator.createIssue(REPO, { title: "Add a health check", body: "Add health().", user: "ann" });
    const tracking = () => trackingBody(emulator, REPO, issue.number);
    await emulator.labelIssue(REPO, issue.number, "lisa", "ann");

    await waitFor("the gate to run", () => processesMatching("sleep 1.371").length > 0 || undefined, 60_000);
    mounted.fill();
    try {
      await waitFor("the run to fail", () => tracking().includes("❌ Failed") || lisa.exitCode !== null, 30_000);
      expect(lisa.exitCode, "Lisa exited").toBeNull();
      expect(tracking()).toContain("Lisa's data disk is full");
      // Still up: a webhook is answered (with a failure GitHub shows, while nothing can be stored), and the health check too.
      await emulator.commentOnIssue(REPO, issue.number, "/lisa status", "ann");
      await emulator.waitForWebhooks();
      expect(emulator.deliveries().at(-1)?.status).not.toBeNull();
      const health = await fetch(`http://127.0.0.1:${lisa.port}/healthz`);
      expect(health.status).toBe(200);
      expect(lisa.exitCode, "Lisa exited").toBeNull();
    } catch (error) {
      console.log(`Lisa's log:\n${readFileSync(logFile, "utf8").slice(-6_000)}\nThe issue says:\n${tracking()}`);
      throw error;
    }

    mounted.free();
    await emulator.commentOnIssue(REPO, issue.number, "/lisa retry", "ann");
    await waitFor("the run to reach review", () => tracking().includes("Ready for review"), 60_000);
    expect(emulator.pulls(REPO)).toHaveLength(1);
    expect(lisa.exitCode).toBeNull();
    // Lisa's data was on the small disk, not beside it.
    expect(readdirSync(mounted.outside(path.join(dataDir, "mirrors")))).toEqual(["acme"]);
  }, 180_000);
});
