import { git } from "./git.ts";
import { mirrorPath, type RepoRef, type WorkspaceOptions } from "./workspace-paths.ts";

/** The commit a remote-tracking branch of the mirror points at, or undefined when there is none. */
export async function remoteHead(options: WorkspaceOptions, ref: RepoRef, branch: string): Promise<string | undefined> {
  try {
    return (await git(mirrorPath(options, ref), ["rev-parse", "--verify", "--quiet", `refs/remotes/origin/${branch}`])).trim();
  } catch {
    return undefined;
  }
}

/**
 * Commits on the remote branch since `since` that someone other than Lisa made (a human pushed
 * them), oldest first. They are kept: the next pass builds on them.
 */
export async function humanCommits(
  options: WorkspaceOptions,
  ref: RepoRef,
  range: { since: string; until: string },
): Promise<{ sha: string; author: string; subject: string }[]> {
  const log = await git(mirrorPath(options, ref), [
    "log",
    "--reverse",
    "--format=%H%x09%an%x09%ae%x09%s",
    `${range.since}..${range.until}`,
  ]).catch(() => "");
  return log
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split("\t"))
    .filter(([, , email]) => email !== options.author.email)
    .map(([sha = "", author = "", , subject = ""]) => ({ sha, author, subject }));
}

/** Commits of a range in the mirror, oldest first, with author and subject. */
export async function gitLog(
  options: WorkspaceOptions,
  ref: RepoRef,
  range: { from: string; to: string },
): Promise<{ sha: string; author: string; subject: string }[]> {
  const log = await git(mirrorPath(options, ref), ["log", "--reverse", "--format=%H%x09%an%x09%s", `${range.from}..${range.to}`]);
  return log
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [sha = "", author = "", subject = ""] = line.split("\t");
      return { sha, author, subject };
    });
}

/**
 * Whether `ancestor` is in the history of `descendant` in the mirror. An object the mirror never
 * saw cannot have been Lisa's, so it is taken as kept.
 */
export async function isAncestor(
  options: WorkspaceOptions,
  ref: RepoRef,
  ancestor: string,
  descendant: string,
): Promise<boolean> {
  const mirror = mirrorPath(options, ref);
  try {
    await git(mirror, ["cat-file", "-e", `${ancestor}^{commit}`]);
  } catch {
    return true;
  }
  try {
    await git(mirror, ["merge-base", "--is-ancestor", ancestor, descendant]);
    return true;
  } catch {
    return false;
  }
}
