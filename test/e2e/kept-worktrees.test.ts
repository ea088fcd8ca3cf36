import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { diskUsage } from "../../src/workspace/disk-usage.ts";
import { trackingBody } from "../support/tracking-body.ts";

// A failed run keeps its worktree for `/lisa retry`; the worktrees of runs nobody comes back to are
// held to a disk budget (LISA_KEPT_WORKTREES_MB), the oldest going first.

const REPO = "acme/api";
/** What the agent leaves before it crashes: unpushed work that makes each worktree about 200 KB. */
const WORK = { "data.bin": "x".repeat(200_000) };

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

describe("the worktrees of failed runs", () => {
  it("are kept within their disk budget: the run that failed first loses its worktree, is told, and a retry does the work again", async () => {
    const agent = createFakeClaude([
      { write: WORK, crash: true },
      { write: WORK, crash: true },
      { write: { "health.ts": "ok\n" }, manifest: { title: "Add health", what: "Adds it." } },
    ]);
    env = await startEmulatedLisa({ claudeBinary: agent.binary, keptWorktreesBytes: 300 * 1024 });
    const { github, lisa } = env;
    await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\n" });
    github.addCollaborator(REPO, "ann", "write");
    const first = await github.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
    const second = await github.createIssue(REPO, { title: "Add a status page", body: "", user: "ann" });
    const worktreeOf = async (issue: number) => {
      const run = (await lisa.store.runs.inState("failed")).find((r) => r.issue_number === issue);
      return run ? ((await lisa.store.steps.of(run.id))[0]?.worktree ?? "") : "";
    };
    const tracking = (issue: number) => trackingBody(github, REPO, issue);

    await github.labelIssue(REPO, first.number, "lisa", "ann");
    await env.settle();
    const firstWorktree = await worktreeOf(first.number);
    expect(existsSync(firstWorktree)).toBe(true);
    // One failed run's worktree fits the budget; two do not.
    const size = await diskUsage(firstWorktree);
    expect(size).toBeGreaterThan(150 * 1024);
    expect(size).toBeLessThan(300 * 1024);

    await github.labelIssue(REPO, second.number, "lisa", "ann");
    await env.settle();
    expect(existsSync(await worktreeOf(second.number))).toBe(true);
    expect(existsSync(firstWorktree)).toBe(false);
    expect(tracking(first.number)).toContain("LISA_KEPT_WORKTREES_MB");
    expect(tracking(second.number)).not.toContain("LISA_KEPT_WORKTREES_MB");

    await github.commentOnIssue(REPO, first.number, "/lisa retry", "ann");
    await env.settle();
    expect(agent.calls()).toHaveLength(3);
    expect(github.pulls(REPO)).toHaveLength(1);
    expect(tracking(first.number)).toContain("its worktree is gone, so the session runs again");
  });
});
