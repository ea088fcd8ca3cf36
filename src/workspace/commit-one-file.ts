import { git } from "./git.ts";

/**
 * A new commit on `parent` whose tree is the parent's with `file` (a `/`-separated path) holding
 * `content`, built from objects alone (hash-object, mktree, commit-tree) in the bare `repo`: no
 * worktree, no index and no path on disk is read or followed, so nothing an agent left behind applies.
 */
export async function commitOneFile(
  repo: string,
  { parent, file, content, message }: { parent: string; file: string; content: string; message: string },
): Promise<string> {
  const blob = await git(repo, ["hash-object", "-w", "--stdin"], { input: content });
  const tree = await treeWith(repo, `${parent}^{tree}`, file.split("/"), blob);
  return git(repo, ["commit-tree", tree, "-p", parent, "-m", message]);
}

/** `tree` (none: an empty one) with the blob at `path`, whatever stood there: a file, a folder or a link. */
async function treeWith(repo: string, tree: string | undefined, [name = "", ...rest]: string[], blob: string): Promise<string> {
  const entries = tree ? (await git(repo, ["ls-tree", "-z", tree])).split("\0").filter(Boolean) : [];
  const nameOf = (entry: string) => entry.slice(entry.indexOf("\t") + 1);
  const [mode, type, sha] = (entries.find((entry) => nameOf(entry) === name) ?? "").split(/[ \t]/);
  const entry =
    rest.length === 0
      ? `100644 blob ${blob}\t${name}`
      : `040000 tree ${await treeWith(repo, type === "tree" && mode === "040000" ? sha : undefined, rest, blob)}\t${name}`;
  const kept = entries.filter((e) => nameOf(e) !== name);
  return git(repo, ["mktree", "-z"], { input: `${[...kept, entry].join("\0")}\0` });
}
