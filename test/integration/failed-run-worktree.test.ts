import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { testStoreLocation } from "../../dev/test-database.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { useLisaChildren } from "../support/lisa-child.ts";

// A failed run is still open: `/lisa retry` resumes it where it stood. Lisa restarting in between
// (a deploy) must not sweep the worktree that holds the step's work.

const SECRET = "worktree-test-secret-of-at-least-32-bytes";
const REPO = "acme/api";

const lisa = useLisaChildren(SECRET);

async function stop(child: ChildProcess): Promise<void> {
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
}

describe("a failed run across a restart", () => {
  it("keeps its worktree, and /lisa retry finishes it", async () => {
    const agent = createFakeClaude([
      { crash: true },
      { write: { "health.ts": "ok\n" }, manifest: { title: "Add health", what: "Adds it." } },
    ]);
    const emulator = await lisa.emulator();
    await emulator.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\n" });
    emulator.addCollaborator(REPO, "ann", "write");
    const dataDir = path.join(tempDir("failed-data"), "lisa");
    const options = { dataDir, claudeBinary: agent.binary };
    const first = await lisa.start(options);
    const issue = await emulator.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
    await emulator.labelIssue(REPO, issue.number, "lisa", "ann");
    await emulator.waitForWebhooks();
    const worktree = await waitFor("the run to fail", async () => {
      const store = new Store(testStoreLocation(dataDir));
      const [failed] = await store.runs.inState("failed");
      const dir = failed ? (await store.steps.of(failed.id))[0]?.worktree : undefined;
      await store.close();
      return dir ?? undefined;
    });
    expect(existsSync(worktree)).toBe(true);

    await stop(first);
    await lisa.start(options);
    // Start-up (recovery and its sweep) is done once Lisa listens.
    expect(existsSync(worktree)).toBe(true);

    await emulator.commentOnIssue(REPO, issue.number, "/lisa retry", "ann");
    await waitFor("the retried run's pull request", () => emulator.pulls(REPO).length > 0);
    expect(emulator.pulls(REPO)).toHaveLength(1);
  });
});
