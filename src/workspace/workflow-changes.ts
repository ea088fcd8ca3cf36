import { rm } from "node:fs/promises";
import { git } from "./git.ts";

// GitHub refuses a push from an App without the `workflows` permission when a commit it adds to the
// repository creates, changes or deletes a file under `.github/workflows/` (a workflow runs with the
// repository's secrets). Lisa's App does not ask for that permission, so she looks before she pushes.

/** Where GitHub keeps a repository's workflows. */
export const WORKFLOWS_DIR = ".github/workflows/";

/** git's empty tree: what a root commit is compared with. */
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/** Lisa's own identity for the commits she writes. */
interface Identity {
  name: string;
  email: string;
}

/** What the unpublished commits (those a push would add: on no remote-tracking branch) do to workflows. */
export interface WorkflowChanges {
  /** Workflow files some unpublished commit changes, against its first parent: what GitHub looks at. */
  touched: string[];
  /** Workflow files that differ between `base` and HEAD: what the commits change taken together. */
  net: string[];
  /** The commit the unpublished ones start from (the oldest one's first parent); undefined without any. */
  base: string | undefined;
  /** Whether the unpublished commits are one line of single-parent commits, so they can be replaced by one. */
  linear: boolean;
}

const paths = (output: string) => [...new Set(output.split("\0").filter(Boolean))].sort();

/** The unpublished commits of `worktree`, oldest first, each with its parents. */
async function unpublished(worktree: string): Promise<{ sha: string; parents: string[] }[]> {
  const lines = await git(worktree, ["rev-list", "--reverse", "--topo-order", "--parents", "HEAD", "--not", "--remotes"]);
  return lines
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [sha = "", ...parents] = line.split(" ");
      return { sha, parents };
    });
}

/** How the commits a push of `worktree`'s HEAD would add change files under `.github/workflows/`. */
export async function workflowChanges(worktree: string): Promise<WorkflowChanges> {
  const commits = await unpublished(worktree);
  if (commits.length === 0) return { touched: [], net: [], base: undefined, linear: true };
  const touched = paths(
    await git(
      worktree,
      [
        "diff-tree",
        "--stdin",
        "-z",
        "-r",
        "--root",
        "--no-commit-id",
        "--name-only",
        "-m",
        "--first-parent",
        "--",
        WORKFLOWS_DIR,
      ],
      { input: `${commits.map((c) => c.sha).join("\n")}\n` },
    ),
  );
  const base = commits[0]?.parents[0];
  const linear = commits.every(
    (c, i) => c.parents.length === (i === 0 && !base ? 0 : 1) && (i === 0 || c.parents[0] === commits[i - 1]?.sha),
  );
  const net = touched.length
    ? paths(await git(worktree, ["diff", "-z", "--name-only", "--no-renames", base ?? EMPTY_TREE, "HEAD", "--", WORKFLOWS_DIR]))
    : [];
  return { touched, net, base, linear };
}

/**
 * Replaces the unpublished commits, which must be linear, by one commit of Lisa's on `base` with
 * HEAD's tree but, for each of `drop`, the file as `base` has it (or none): the worktree's branch
 * then points at it. Its message is the replaced commits' messages, newest last, and `note`.
 * @returns the new commit
 */
export async function squashUnpublished(
  worktree: string,
  lisa: Identity,
  { base, drop = [], note }: { base: string | undefined; drop?: readonly string[]; note?: string },
): Promise<string> {
  const head = (await git(worktree, ["rev-parse", "--verify", "HEAD^{commit}"])).trim();
  const tree = drop.length
    ? await treeWithout(worktree, head, base, drop)
    : (await git(worktree, ["rev-parse", `${head}^{tree}`])).trim();
  const commits = await unpublished(worktree);
  const messages: string[] = [];
  for (const { sha } of commits) messages.push((await git(worktree, ["log", "-1", "--format=%B", sha])).trim());
  const message = [...new Set(messages.filter(Boolean)), ...(note ? [note] : [])].join("\n\n") || "Work by the agent";
  const identity = ["-c", `user.name=${lisa.name}`, "-c", `user.email=${lisa.email}`];
  const created = (
    await git(worktree, [...identity, "commit-tree", tree, ...(base ? ["-p", base] : []), "-F", "-"], { input: message })
  ).trim();
  await git(worktree, ["update-ref", "-m", "Lisa publishes no workflow change", "HEAD", created, head]);
  return created;
}

/** The tree of `head` with each of `files` as `base` has it, or left out where `base` has none. */
async function treeWithout(worktree: string, head: string, base: string | undefined, files: readonly string[]): Promise<string> {
  // A throw-away index: the worktree's own describes the agent's files and stays as it is.
  const indexFile = `${(await git(worktree, ["rev-parse", "--absolute-git-dir"])).trim()}/lisa-workflows-index`;
  try {
    await git(worktree, ["read-tree", head], { indexFile });
    await git(worktree, ["update-index", "--force-remove", "-z", "--stdin"], { indexFile, input: `${files.join("\0")}\0` });
    const kept = base ? (await git(worktree, ["ls-tree", "-z", "-r", base, "--", ...files])).split("\0").filter(Boolean) : [];
    if (kept.length) await git(worktree, ["update-index", "-z", "--index-info"], { indexFile, input: `${kept.join("\0")}\0` });
    return (await git(worktree, ["write-tree"], { indexFile })).trim();
  } finally {
    await rm(indexFile, { force: true });
  }
}
