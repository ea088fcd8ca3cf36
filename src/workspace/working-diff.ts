import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { git } from "./git.ts";
import { LISA_FILES } from "./workspace-paths.ts";

/** The change in a worktree since a commit, as a reviewer would read it. */
export interface WorkingDiff {
  /** Paths changed, added or deleted, from the repository's root. */
  files: string[];
  /** The unified diff, at most `maxChars` long. */
  diff: string;
  /** Characters of the diff left out to keep within `maxChars`. */
  cut: number;
  /** The worktree's content as the diff saw it (workingTree). */
  tree: string;
}

/**
 * The tree of everything the worktree holds now, commits, uncommitted edits and new files alike,
 * ignored files and Lisa's own left out: equal before and after a process only if it changed
 * nothing there. Made in a copy of the index, so the worktree's own index (which the agent's next
 * session sees) is never touched.
 */
export async function workingTree(worktree: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "lisa-tree-"));
  const indexFile = path.join(dir, "index");
  try {
    const own = (await git(worktree, ["rev-parse", "--path-format=absolute", "--git-path", "index"])).trim();
    // Copied for its file stamps: from an empty index, `add` would read every file of the checkout again.
    await copyFile(own, indexFile).catch(() => git(worktree, ["read-tree", "HEAD"], { indexFile }));
    await git(worktree, ["add", "--all"], { indexFile });
    await git(worktree, ["rm", "--cached", "--quiet", "--ignore-unmatch", "--", ...LISA_FILES], { indexFile });
    return (await git(worktree, ["write-tree"], { indexFile })).trim();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What the worktree holds now (workingTree) against the commit `since`, the diff cut at `maxChars`. */
export async function workingDiff(worktree: string, since: string, maxChars: number): Promise<WorkingDiff> {
  const tree = await workingTree(worktree);
  const diffArgs = ["diff", "--no-color", "--no-ext-diff", "--no-renames", since, tree];
  const names = await git(worktree, [...diffArgs, "--name-only"]);
  const diff = await git(worktree, diffArgs);
  return {
    files: names.split("\n").filter(Boolean),
    diff: diff.slice(0, maxChars),
    cut: Math.max(0, diff.length - maxChars),
    tree,
  };
}
