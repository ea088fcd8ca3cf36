import { realpathSync } from "node:fs";
import path from "node:path";
import { git } from "./git.ts";
import { worktreeFolders } from "./list-worktrees.ts";
import { withRepoLock } from "./repo-lock.ts";
import { gitWorksIn } from "./stale-locks.ts";
import { lockKey, type WorkspaceOptions } from "./workspace-paths.ts";

/**
 * Deletes the mirror's local branches no worktree has checked out. The mirror fetches into
 * `refs/remotes/`; a local branch exists only for a worktree, so one without it is what a removal
 * killed before `branch -D` left. Skipped while git works in the mirror: a CLI's `worktree add -b`
 * makes its branch a moment before its worktree.
 */
export async function dropOrphanBranches(mirror: string): Promise<void> {
  // Listed first: a branch made after the look at the processes below is not in this list.
  const local = (await git(mirror, ["for-each-ref", "--format=%(refname)", "refs/heads/"]))
    .split("\n")
    .filter(Boolean)
    .map((ref) => ref.slice("refs/heads/".length));
  if (local.length === 0) return;
  const head = (await git(mirror, ["symbolic-ref", "--quiet", "--short", "HEAD"]).catch(() => "")).trim();
  const orphans = async () => {
    const inUse = new Set((await checkedOut(mirror)).values());
    return local.filter((branch) => !inUse.has(branch) && branch !== head);
  };
  // Most looks find none: the processes are read only when there is one to drop.
  if ((await orphans()).length === 0 || (await gitWorksIn(mirror))) return;
  for (const branch of await orphans()) await git(mirror, ["branch", "-D", "--", branch]).catch(() => undefined);
}

/**
 * Drops, in every mirror, the local branches no worktree has checked out (see dropOrphanBranches),
 * each mirror under its repository's lock, so that no worktree Lisa makes meanwhile loses its branch.
 */
export async function dropOrphanBranchesIn(options: WorkspaceOptions): Promise<void> {
  for (const { mirror } of await worktreeFolders(options)) {
    if (!mirror) continue;
    const ref = { owner: path.basename(path.dirname(mirror)), repo: path.basename(mirror, ".git") };
    await withRepoLock(lockKey(ref), () => dropOrphanBranches(mirror)).catch(() => undefined);
  }
}

/** The branch each worktree of `mirror` has checked out, by the worktree's real path. */
export async function checkedOut(mirror: string): Promise<Map<string, string>> {
  const listing = await git(mirror, ["worktree", "list", "--porcelain", "-z"]).catch(() => "");
  const branches = new Map<string, string>();
  for (const entry of listing.split("\0\0")) {
    const fields = entry.split("\0");
    const folder = fields.find((f) => f.startsWith("worktree "))?.slice("worktree ".length);
    const branch = fields.find((f) => f.startsWith("branch refs/heads/"))?.slice("branch refs/heads/".length);
    if (folder && branch) branches.set(realpathOr(folder), branch);
  }
  return branches;
}

/** A folder's real path, or its plain absolute path once it is gone. */
export function realpathOr(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}
