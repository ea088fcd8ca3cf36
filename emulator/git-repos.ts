import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/**
 * The hook that refuses an App's workflow changes (refuse-workflows.mjs). git runs it only for a
 * push whose receive-pack is told `receive.procReceiveRefs` (git-http.ts does, for App tokens
 * without `workflows`), so people's pushes and the repository's other hooks are untouched.
 */
const PROC_RECEIVE = `#!/bin/sh\nexec "\${EMULATOR_NODE:-node}" '${fileURLToPath(new URL("./refuse-workflows.mjs", import.meta.url))}'\n`;

/**
 * A clean environment: the emulator's repositories must not depend on the user's git config
 * (signing, hooks, default branch) nor on a GIT_DIR inherited from a surrounding git hook.
 */
export function gitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    // No automatic gc: a commit of thousands of files (the bench's 10,000-file seed) starts one in
    // the background, still writing into the throw-away clone while it is removed (ENOTEMPTY).
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "gc.auto",
    GIT_CONFIG_VALUE_0: "0",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "GitHub Emulator",
    GIT_AUTHOR_EMAIL: "emulator@example.invalid",
    GIT_COMMITTER_NAME: "GitHub Emulator",
    GIT_COMMITTER_EMAIL: "emulator@example.invalid",
  };
}

/** How a pull request is merged: a merge commit, one squashed commit, or its commits rebased. */
export type MergeMethod = "merge" | "squash" | "rebase";
export const MERGE_METHODS: readonly MergeMethod[] = ["merge", "squash", "rebase"];

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync("git", args, { cwd, env: gitEnv(), maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

async function gitBuffer(cwd: string, args: string[]): Promise<Buffer> {
  const { stdout } = await execFileAsync("git", args, {
    cwd,
    env: gitEnv(),
    encoding: "buffer",
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/**
 * Creates a bare repository at `gitDir` whose `branch` holds one commit with `files`. The commit is
 * made in a throw-away clone and pushed, the way a person would seed a repository.
 */
export async function createBareRepository(gitDir: string, branch: string, files: Record<string, string>): Promise<void> {
  await mkdir(gitDir, { recursive: true });
  await git(gitDir, ["init", "--bare", "--quiet", `--initial-branch=${branch}`]);
  await writeFile(path.join(gitDir, "hooks", "proc-receive"), PROC_RECEIVE, { mode: 0o755 });
  const work = await mkdtemp(path.join(tmpdir(), "github-emulator-seed-"));
  try {
    await git(work, ["init", "--quiet", `--initial-branch=${branch}`]);
    for (const [file, content] of Object.entries(files)) {
      const target = path.join(work, file);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    await git(work, ["add", "--all"]);
    await git(work, ["commit", "--quiet", "--allow-empty", "-m", "Initial commit"]);
    await git(work, ["push", "--quiet", gitDir, `HEAD:refs/heads/${branch}`]);
    // Its files are known to the contents API from the start, as GitHub knows a pushed commit's.
    const commit = await commitWithoutGit(gitDir, branch);
    if (commit !== undefined)
      for (const entry of await listTree(work, "HEAD", "", undefined, true)) {
        const content = files[entry.path];
        if (entry.type === "file" && content !== undefined)
          remember(pathKey(gitDir, commit, entry.path), Promise.resolve({ type: "file", entry, content: Buffer.from(content) }));
      }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The commit a branch points at, or undefined when there is no such branch. Read as git reads it,
 * from the loose ref or else `packed-refs` (git replaces either by a rename, so a read sees the old
 * or the new, never half): every view of a pull request asks twice, and a spawn costs milliseconds.
 */
export async function branchSha(gitDir: string, branch: string): Promise<string | undefined> {
  const ref = `refs/heads/${branch}`;
  if (!isPlainRef(branch)) return revParse(gitDir, ref);
  const loose = (await readFile(path.join(gitDir, ref), "utf8").catch(() => undefined))?.trim();
  if (loose !== undefined) return SHA.test(loose) ? loose : revParse(gitDir, ref);
  const packed = await readFile(path.join(gitDir, "packed-refs"), "utf8").catch(() => "");
  const line = packed.split("\n").find((entry) => entry.endsWith(` ${ref}`));
  const sha = line?.slice(0, 40);
  return sha !== undefined && SHA.test(sha) ? sha : undefined;
}

const SHA = /^[0-9a-f]{40}$/;

/** A ref name made of plain path segments, which names a file under the git directory as it is. */
const isPlainRef = (ref: string) => /^[\w.-]+(\/[\w.-]+)*$/.test(ref) && !ref.split("/").some((part) => part.startsWith("."));

async function revParse(gitDir: string, ref: string): Promise<string | undefined> {
  try {
    return (await git(gitDir, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])).trim();
  } catch {
    return undefined;
  }
}

/** Whether `sha` names a commit of the repository: GitHub checks a check run's `head_sha` so. */
export async function commitExists(gitDir: string, sha: string): Promise<boolean> {
  if (!SHA.test(sha)) return false;
  try {
    await git(gitDir, ["cat-file", "-e", `${sha}^{commit}`]);
    return true;
  } catch {
    return false;
  }
}

/** Whether commit `sha` is in the history of `ref` (a branch name or a commit). */
export async function inHistoryOf(gitDir: string, sha: string, ref: string): Promise<boolean> {
  try {
    await git(gitDir, ["merge-base", "--is-ancestor", sha, ref]);
    return true;
  } catch {
    return false;
  }
}

/** A commit as GitHub's payloads describe it: its tree, parents, message, and who wrote and committed it when. */
export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  message: string;
  author: { name: string; email: string; date: string };
  committer: { name: string; email: string; date: string };
}

export async function commitInfo(gitDir: string, sha: string): Promise<CommitInfo> {
  const format = ["%T", "%P", "%an", "%ae", "%aI", "%cn", "%ce", "%cI", "%B"].join("%x00");
  const [tree = "", parents = "", an = "", ae = "", ad = "", cn = "", ce = "", cd = "", message = ""] = (
    await git(gitDir, ["show", "-s", `--format=${format}`, sha])
  ).split("\0");
  return {
    sha,
    tree,
    parents: parents.split(" ").filter(Boolean),
    message: message.trimEnd(),
    author: { name: an, email: ae, date: ad },
    committer: { name: cn, email: ce, date: cd },
  };
}

/** How many commits `head` has that `base` lacks: GitHub refuses a pull request without any. */
export async function commitsAhead(gitDir: string, base: string, head: string): Promise<number> {
  const count = await git(gitDir, ["rev-list", "--count", `refs/heads/${base}..refs/heads/${head}`]);
  return Number(count.trim());
}

type DiffStats = { commits: number; additions: number; deletions: number; changedFiles: number };

/** Each pair of commits' stats, computed once: commits never change, and every read of a pull request asks. */
const statsOf = new Map<string, Promise<DiffStats>>();

/** What a pull request from `headSha` into `baseSha` changes: its commits, lines added and deleted, files. */
export function diffStats(gitDir: string, baseSha: string, headSha: string): Promise<DiffStats> {
  const key = `${gitDir}\0${baseSha}\0${headSha}`;
  const known = statsOf.get(key);
  if (known) return known;
  const computed = computeDiffStats(gitDir, baseSha, headSha);
  statsOf.set(key, computed);
  // A failed computation (a repository gone) is not kept.
  computed.catch(() => statsOf.delete(key));
  return computed;
}

async function computeDiffStats(gitDir: string, baseSha: string, headSha: string): Promise<DiffStats> {
  const commits = Number((await git(gitDir, ["rev-list", "--count", `${baseSha}..${headSha}`])).trim());
  const numstat = await git(gitDir, ["diff", "--numstat", `${baseSha}...${headSha}`]);
  const lines = numstat.split("\n").filter(Boolean);
  const sum = (column: number) => lines.reduce((total, line) => total + (Number(line.split("\t")[column]) || 0), 0);
  return { commits, additions: sum(0), deletions: sum(1), changedFiles: lines.length };
}

export interface TreeEntry {
  type: "file" | "dir" | "symlink" | "submodule";
  name: string;
  path: string;
  sha: string;
  size: number;
}

export type PathContent = { type: "file"; entry: TreeEntry; content: Buffer } | { type: "dir"; entries: TreeEntry[] };

/**
 * What the contents API shows at `filePath` on `ref`: a file with its bytes, or a directory listing.
 * Undefined when the ref or the path does not exist. Blobs are read with `git cat-file`, which
 * gives their exact bytes (no text conversion), like GitHub's raw media type; once per commit and
 * path, as each spawn blocks the emulator's loop for milliseconds, and that loop sends the deliveries.
 */
export async function readPath(gitDir: string, ref: string, filePath: string): Promise<PathContent | undefined> {
  // A ref starting with a dash would be read by git as an option.
  if (ref.startsWith("-")) return undefined;
  const wanted = filePath.replace(/^\/+|\/+$/g, "");
  const commit = await commitWithoutGit(gitDir, ref);
  if (commit === undefined) return readPathAt(gitDir, ref, wanted).catch(() => undefined);
  // A commit never changes: what it holds at a path is read from git once.
  const key = pathKey(gitDir, commit, wanted);
  return (pathsAt.get(key) ?? remember(key, readPathAt(gitDir, commit, wanted))).catch(() => undefined);
}

const pathKey = (gitDir: string, commit: string, filePath: string) => `${gitDir}\0${commit}\0${filePath}`;

function remember(key: string, read: Promise<PathContent | undefined>) {
  if (pathsAt.size >= PATHS_KEPT) pathsAt.delete(pathsAt.keys().next().value as string);
  pathsAt.set(key, read);
  // A failed read (a commit not in this repository, a repository gone) is not kept.
  read.catch(() => pathsAt.delete(key));
  return read;
}

/** Contents reads by commit and path; Lisa reads her config at every label, a flood's worth a second. */
const pathsAt = new Map<string, Promise<PathContent | undefined>>();
const PATHS_KEPT = 4_096;

/**
 * The commit `ref` names when that needs no git: a full sha, or a branch whose loose ref file holds
 * one (a loose ref overrides a packed one). Undefined otherwise (tags, packed refs, abbreviations),
 * for git to resolve.
 */
async function commitWithoutGit(gitDir: string, ref: string): Promise<string | undefined> {
  if (SHA.test(ref)) return ref;
  if (!isPlainRef(ref)) return undefined;
  // git reads refs/tags/<name> before refs/heads/<name>: a tag of the same name is left to git.
  const [branch, tag] = await Promise.all(
    [path.join(gitDir, "refs", "heads", ref), path.join(gitDir, "refs", "tags", ref)].map((file) =>
      readFile(file, "utf8").catch(() => undefined),
    ),
  );
  const sha = branch?.trim();
  return tag === undefined && sha !== undefined && SHA.test(sha) ? sha : undefined;
}

/** readPath at a tree-ish git resolves; throws when git cannot read it. */
async function readPathAt(gitDir: string, treeish: string, wanted: string): Promise<PathContent | undefined> {
  if (wanted === "") return { type: "dir", entries: await listTree(gitDir, treeish, "") };
  const [entry] = (await listTree(gitDir, treeish, "", wanted)).filter((e) => e.path === wanted);
  if (!entry) return undefined;
  if (entry.type === "dir") return { type: "dir", entries: await listTree(gitDir, entry.sha, wanted) };
  if (entry.type === "submodule") return { type: "dir", entries: [] };
  return { type: "file", entry, content: await gitBuffer(gitDir, ["cat-file", "blob", entry.sha]) };
}

/** Entries of a tree-ish (one level, or every file below), their paths prefixed with `prefix`; only `only` when given. */
async function listTree(gitDir: string, treeish: string, prefix: string, only?: string, recursive = false): Promise<TreeEntry[]> {
  const output = await git(gitDir, ["ls-tree", "-l", "-z", ...(recursive ? ["-r"] : []), treeish, ...(only ? ["--", only] : [])]);
  return output
    .split("\0")
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf("\t");
      const [mode = "", , sha = "", size = "-"] = line.slice(0, tab).split(/\s+/);
      const name = line.slice(tab + 1);
      const type = mode === "040000" ? "dir" : mode === "120000" ? "symlink" : mode === "160000" ? "submodule" : "file";
      const entryPath = prefix ? `${prefix}/${name}` : name;
      return { type, name: path.posix.basename(name), path: entryPath, sha, size: size === "-" ? 0 : Number(size) };
    });
}

/**
 * Commits `files` on `branch` as `author`, as a person's `git push` would: from the branch's head,
 * or (force) from its merge-base with `base`, which rewrites the branch's history. Null deletes a file.
 */
export async function commitOnBranch(
  gitDir: string,
  options: {
    branch: string;
    base: string;
    files: Record<string, string | null>;
    message: string;
    author: string;
    force: boolean;
  },
): Promise<{ before: string; after: string }> {
  const work = await mkdtemp(path.join(tmpdir(), "emulator-push-"));
  try {
    await git(work, ["clone", "--quiet", gitDir, "."]);
    const before = (await git(work, ["rev-parse", `origin/${options.branch}`])).trim();
    const start = options.force ? (await git(work, ["merge-base", `origin/${options.base}`, before])).trim() : before;
    await git(work, ["checkout", "--quiet", "-B", options.branch, start]);
    for (const [file, content] of Object.entries(options.files)) {
      const target = path.join(work, file);
      if (content === null) {
        await rm(target, { force: true });
        continue;
      }
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    await git(work, ["add", "--all"]);
    const email = `${options.author}@users.noreply.example.invalid`;
    await git(work, [
      "-c",
      `user.name=${options.author}`,
      "-c",
      `user.email=${email}`,
      "commit",
      "--quiet",
      "--author",
      `${options.author} <${email}>`,
      "-m",
      options.message,
    ]);
    await git(work, ["push", "--quiet", ...(options.force ? ["--force"] : []), "origin", `HEAD:refs/heads/${options.branch}`]);
    return { before, after: (await git(work, ["rev-parse", "HEAD"])).trim() };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Merges `head` into `base` with a merge commit, as GitHub's merge button does; undefined when it conflicts. */
export async function mergeBranches(
  gitDir: string,
  base: string,
  head: string,
  title: string,
  method: MergeMethod = "merge",
): Promise<string | undefined> {
  const work = await mkdtemp(path.join(tmpdir(), "emulator-merge-"));
  try {
    await git(work, ["clone", "--quiet", gitDir, "."]);
    await git(work, ["checkout", "--quiet", "-B", base, `origin/${base}`]);
    try {
      if (method === "merge") await git(work, ["merge", "--quiet", "--no-ff", "-m", title, `origin/${head}`]);
      else if (method === "squash") {
        await git(work, ["merge", "--quiet", "--squash", `origin/${head}`]);
        await git(work, ["commit", "--quiet", "--allow-empty", "-m", title]);
      } else {
        // The head's commits replayed on the base, which then fast-forwards to them.
        await git(work, ["checkout", "--quiet", "-B", "rebased", `origin/${head}`]);
        await git(work, ["rebase", "--quiet", `origin/${base}`]);
        await git(work, ["checkout", "--quiet", base]);
        await git(work, ["merge", "--quiet", "--ff-only", "rebased"]);
      }
    } catch {
      return undefined;
    }
    await git(work, ["push", "--quiet", "origin", `HEAD:refs/heads/${base}`]);
    return (await git(work, ["rev-parse", "HEAD"])).trim();
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The paths `base...head` changes: what a merge of head into base would write. */
export async function changedPaths(gitDir: string, base: string, head: string): Promise<string[]> {
  const names = await git(gitDir, ["diff", "--name-only", `${base}...${head}`]);
  return names.split("\n").filter(Boolean);
}

/** The hunk of `base...head` for `file` that holds `line` of the new side, or a minimal one. */
export async function diffHunk(gitDir: string, base: string, head: string, file: string, line: number): Promise<string> {
  const diff = await git(gitDir, ["diff", `${base}...${head}`, "--", file]).catch(() => "");
  const hunks = diff.split(/\n(?=@@ )/).filter((h) => h.startsWith("@@ "));
  for (const hunk of hunks) {
    const match = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(hunk);
    const start = Number(match?.[1] ?? 0);
    const count = Number(match?.[2] ?? 1);
    if (line >= start && line < start + Math.max(count, 1)) return hunk.trimEnd();
  }
  return hunks[0]?.trimEnd() ?? `@@ -0,0 +${line},1 @@`;
}
