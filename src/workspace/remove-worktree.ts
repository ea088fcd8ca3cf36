import { rm } from "node:fs/promises";
import { GitError } from "../errors.ts";
import { git } from "./git.ts";
import { isOwnWorkDir } from "./mirror-hygiene.ts";
import { checkedOut, dropOrphanBranches, realpathOr } from "./orphan-branches.ts";
import { withRepoLock } from "./repo-lock.ts";
import { scrub } from "./sync-mirror.ts";
import { lockKey, mirrorPath, type RepoRef, type WorkspaceOptions, workDirRoots } from "./workspace-paths.ts";

/** Removes a session's worktree and its local branch; the pushed branch stays on the remote. */
export function removeWorktree(
  options: WorkspaceOptions,
  ref: RepoRef,
  worktree: { path: string; branch?: string },
): Promise<void> {
  return withRepoLock(lockKey(ref), async () => {
    const mirror = mirrorPath(options, ref);
    // The path is Lisa's record, but a folder on the way may be a link the agent planted.
    if (!isOwnWorkDir(worktree.path, workDirRoots(options, ref))) {
      throw new GitError(`${worktree.path} is not a worktree folder of Lisa's; Lisa will not remove it.`);
    }
    await scrub(options, ref);
    const branch = worktree.branch ?? (await checkedOut(mirror)).get(realpathOr(worktree.path));
    // Twice forced: a CLI may leave its worktree locked, and it may hold uncommitted leftovers.
    await git(mirror, ["worktree", "remove", "--force", "--force", worktree.path]).catch(() => undefined);
    await rm(worktree.path, { recursive: true, force: true });
    await git(mirror, ["worktree", "prune"]);
    if (branch) await git(mirror, ["branch", "-D", branch]).catch(() => undefined);
    // A removal killed before its branch went left that branch, and `--worktree`'s `-b` trips over it.
    await dropOrphanBranches(mirror);
  });
}
