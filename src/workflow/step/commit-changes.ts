import { git } from "../../workspace/git.ts";
import { LISA_FILES } from "../../workspace/workspace-paths.ts";

/** Commits whatever the agent left uncommitted; false when there was nothing. */
export async function commitPending(worktree: string, message: string): Promise<boolean> {
  await git(worktree, ["add", "--all"]);
  // The exclude file keeps Lisa's files out of `add`, but an agent can force-add them.
  await git(worktree, ["rm", "--cached", "--quiet", "--ignore-unmatch", "--", ...LISA_FILES]);
  const staged = (await git(worktree, ["diff", "--cached", "--name-only"])).trim();
  if (!staged) return false;
  await git(worktree, ["commit", "--quiet", "--no-verify", "-m", message]);
  return true;
}

/** Number of commits on HEAD that `since` does not have. */
export async function commitsSince(worktree: string, since: string): Promise<number> {
  return Number((await git(worktree, ["rev-list", "--count", `${since}..HEAD`])).trim());
}

/** Files changed on HEAD since `since`, with added and deleted line counts. */
export async function changedFiles(worktree: string, since: string): Promise<{ path: string; added: number; deleted: number }[]> {
  const numstat = await git(worktree, ["diff", "--numstat", `${since}...HEAD`]);
  return numstat
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [added = "0", deleted = "0", ...rest] = line.split("\t");
      return { path: rest.join("\t"), added: Number(added) || 0, deleted: Number(deleted) || 0 };
    });
}
