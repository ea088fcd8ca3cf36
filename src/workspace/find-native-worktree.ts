import { realpathSync } from "node:fs";
import { GitError } from "../errors.ts";
import { git } from "./git.ts";
import { isOwnWorkDir } from "./mirror-hygiene.ts";
import { withRepoLock } from "./repo-lock.ts";
import { scrub } from "./sync-mirror.ts";
import { lockKey, mirrorPath, nativeWorktreePath, type RepoRef, type WorkspaceOptions, workDirRoots } from "./workspace-paths.ts";

/**
 * The worktree a CLI made with `--worktree <name>` on `branch`, if it made one: the path Lisa
 * expects, once git's record of the branch's worktree is found to be that folder. The record is
 * the agent's to write; one that names any other folder is refused, and that folder left alone.
 * @throws GitError when the branch is checked out somewhere else
 */
export function findNativeWorktree(
  options: WorkspaceOptions,
  ref: RepoRef,
  { name, branch }: { name: string; branch: string },
): Promise<string | undefined> {
  return withRepoLock(lockKey(ref), async () => {
    await scrub(options, ref);
    const listing = await git(mirrorPath(options, ref), ["worktree", "list", "--porcelain", "-z"]);
    const expected = nativeWorktreePath(options, ref, name);
    for (const entry of listing.split("\0\0")) {
      const fields = entry.split("\0");
      if (!fields.includes(`branch refs/heads/${branch}`)) continue;
      const listed = fields.find((f) => f.startsWith("worktree "))?.slice("worktree ".length) ?? "";
      if (isOwnWorkDir(expected, workDirRoots(options, ref)) && samePlace(listed, expected)) return expected;
      throw new GitError(
        `The worktree on \`${branch}\` is recorded at ${listed}, not where the CLI makes its own (${expected}); Lisa neither uses nor removes it.`,
      );
    }
    return undefined;
  });
}

function samePlace(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}
