import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { workingDiff, workingTree } from "../../src/workspace/working-diff.ts";
import { gitIn, tempDir } from "../support/git-fixtures.ts";

/** A repository with one commit holding `README.md` and `src/a.ts`; returns its path and that commit. */
function repository(): { dir: string; base: string } {
  const dir = tempDir("working-diff");
  gitIn(dir, "init", "-q", "-b", "main");
  writeFileSync(path.join(dir, "README.md"), "# Demo\n");
  writeFileSync(path.join(dir, "a.ts"), "export const a = 1;\n");
  writeFileSync(path.join(dir, ".gitignore"), "node_modules/\n");
  gitIn(dir, "add", ".");
  gitIn(dir, "commit", "-q", "-m", "base");
  return { dir, base: gitIn(dir, "rev-parse", "HEAD").trim() };
}

describe("workingDiff", () => {
  it("holds committed, uncommitted and new files, not ignored ones or Lisa's, and leaves the index alone", async () => {
    const { dir, base } = repository();
    writeFileSync(path.join(dir, "a.ts"), "export const a = 2;\n");
    gitIn(dir, "commit", "-q", "-am", "committed");
    writeFileSync(path.join(dir, "README.md"), "# Demo\n\nUsage: run it.\n");
    writeFileSync(path.join(dir, "new.md"), "brand new\n");
    writeFileSync(path.join(dir, ".lisa-manifest.json"), "{}");
    mkdirSync(path.join(dir, "node_modules"));
    writeFileSync(path.join(dir, "node_modules", "dep.js"), "ignored\n");
    const status = gitIn(dir, "status", "--porcelain");

    const change = await workingDiff(dir, base, 10_000);

    expect(change.files.sort()).toEqual(["README.md", "a.ts", "new.md"]);
    expect(change.diff).toContain("+Usage: run it.");
    expect(change.diff).toContain("+brand new");
    expect(change.diff).toContain("+export const a = 2;");
    expect(change.cut).toBe(0);
    // Nothing staged, nothing moved: the agent's next session finds its worktree as it left it.
    expect(gitIn(dir, "diff", "--cached", "--name-only").trim()).toBe("");
    expect(gitIn(dir, "status", "--porcelain")).toBe(status);
  });

  it("cuts a long diff and says how much it left out", async () => {
    const { dir, base } = repository();
    writeFileSync(path.join(dir, "big.txt"), `${"x".repeat(99)}\n`.repeat(100));
    const change = await workingDiff(dir, base, 1_000);
    expect(change.diff).toHaveLength(1_000);
    expect(change.cut).toBeGreaterThan(9_000);
    expect(change.files).toEqual(["big.txt"]);
  });
});

describe("workingTree", () => {
  it("stays the same while nothing changes, and moves with an edit to an uncommitted file", async () => {
    const { dir } = repository();
    writeFileSync(path.join(dir, "README.md"), "# Demo, edited\n");
    const before = await workingTree(dir);
    expect(await workingTree(dir)).toBe(before);
    writeFileSync(path.join(dir, "README.md"), "# Demo, edited again\n");
    expect(await workingTree(dir)).not.toBe(before);
  });
});
