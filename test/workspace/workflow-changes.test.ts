import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { refusedWorkflow, workflowBlockReason } from "../../src/workflow/step/workflow-guard.ts";
import { squashUnpublished, workflowChanges } from "../../src/workspace/workflow-changes.ts";
import { createRemote, gitIn, tempDir } from "../support/git-fixtures.ts";

const LISA = { name: "Lisa", email: "lisa[bot]@users.noreply.github.com" };
const CI = ".github/workflows/ci.yml";

/** A clone whose `origin/main` (published) holds a workflow; what is committed here is not published. */
function clone(): string {
  const remote = createRemote(tempDir("remotes"), "acme/api", "main", { "README.md": "# API\n", [CI]: "on: push\n" });
  const dir = path.join(tempDir("clone"), "api");
  gitIn(path.dirname(dir), "clone", "--quiet", remote, dir);
  gitIn(dir, "checkout", "--quiet", "-b", "lisa/3-x");
  return dir;
}

function commit(dir: string, files: Record<string, string>, message: string): void {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  gitIn(dir, "add", "--all");
  gitIn(dir, "commit", "--quiet", "-m", message);
}

describe("workflowChanges", () => {
  it("sees no change when the unpublished commits leave workflows alone", async () => {
    const dir = clone();
    commit(dir, { "health.ts": "ok\n" }, "Add health");
    expect(await workflowChanges(dir)).toMatchObject({ touched: [], net: [] });
  });

  it("names a workflow changed on the way and in the end, and one only on the way", async () => {
    const dir = clone();
    commit(dir, { [CI]: "on: [push]\n", ".github/workflows/new.yml": "on: push\n" }, "Change CI");
    commit(dir, { [CI]: "on: push\n" }, "Undo half of it");
    const changes = await workflowChanges(dir);
    expect(changes).toMatchObject({
      touched: [CI, ".github/workflows/new.yml"],
      net: [".github/workflows/new.yml"],
      linear: true,
    });
    expect(changes.base).toBe(gitIn(dir, "rev-parse", "origin/main").trim());
  });
});

describe("squashUnpublished", () => {
  it("replaces commits that change a workflow and undo it by one commit of Lisa's with the same tree", async () => {
    const dir = clone();
    commit(dir, { [CI]: "on: [push]\n", "health.ts": "ok\n" }, "Change CI");
    commit(dir, { [CI]: "on: push\n" }, "Leave CI alone");
    const tree = gitIn(dir, "rev-parse", "HEAD^{tree}").trim();
    const { base } = await workflowChanges(dir);
    await squashUnpublished(dir, LISA, { base });
    expect(gitIn(dir, "rev-parse", "HEAD^{tree}").trim()).toBe(tree);
    expect(gitIn(dir, "rev-parse", "HEAD~1").trim()).toBe(base);
    expect(gitIn(dir, "log", "-1", "--format=%an%n%B").trim()).toBe("Lisa\nChange CI\n\nLeave CI alone");
    expect(await workflowChanges(dir)).toMatchObject({ touched: [], net: [] });
  });

  it("leaves out the workflow files it is told to drop, and keeps the rest of the work", async () => {
    const dir = clone();
    commit(dir, { [CI]: "on: [push]\n", ".github/workflows/new.yml": "x\n", "health.ts": "ok\n" }, "Attempt");
    const { base, touched } = await workflowChanges(dir);
    await squashUnpublished(dir, LISA, { base, drop: touched, note: "Workflows left out." });
    expect(gitIn(dir, "show", `HEAD:${CI}`)).toBe("on: push\n");
    expect(gitIn(dir, "ls-tree", "-r", "--name-only", "HEAD").trim().split("\n")).toEqual([CI, "README.md", "health.ts"]);
    expect(gitIn(dir, "log", "-1", "--format=%B").trim()).toBe("Attempt\n\nWorkflows left out.");
    // The agent's files are still in the worktree (and its index), only not in the commit.
    const status = gitIn(dir, "status", "--porcelain").trim().split("\n").sort();
    expect(status).toEqual(["A  .github/workflows/new.yml", "M  .github/workflows/ci.yml"]);
  });
});

describe("the reason a workflow change blocks a step", () => {
  it("escapes the names, lists three, and reads GitHub's refusal", () => {
    const reason = workflowBlockReason(["a.yml", "b`c.yml", "c.yml", "d.yml"]);
    expect(reason).toMatch(/^The agent changed `a\.yml`, ``b`c\.yml``, `c\.yml` and 1 more, and Lisa's GitHub App/);
    const git =
      " ! [remote rejected] lisa/1-x -> lisa/1-x (refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission)";
    expect(refusedWorkflow(git)).toBe(CI);
    expect(refusedWorkflow(" ! [rejected] lisa/1-x -> lisa/1-x (fetch first)")).toBeUndefined();
  });
});
