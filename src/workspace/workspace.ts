import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { lstat, mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { GitError } from "../errors.ts";
import { git } from "./git.ts";
import { isOwnWorkDir, scrubMirror, type WorkDirRoots } from "./mirror-hygiene.ts";
import { withRepoLock } from "./repo-lock.ts";
import { assertNothingSecretUnpushed } from "./scan-unpushed.ts";
import { clearStaleLocks, gitWorksIn } from "./stale-locks.ts";

export interface RepoRef {
  owner: string;
  repo: string;
}

export interface WorkspaceOptions {
  /** Lisa's data directory; mirrors and worktrees live under it. */
  dataDir: string;
  /** Where repositories are cloned from, e.g. `https://github.com`; a GHES host or a local path in tests. */
  gitBaseUrl: string;
  /** Identity of the commits Lisa makes. */
  author: { name: string; email: string };
}

/** Files the agent writes for Lisa that must never be committed. */
export const LISA_FILES = [".lisa-manifest.json", ".lisa-plan.json"];

export const remoteUrl = (options: WorkspaceOptions, { owner, repo }: RepoRef) =>
  `${options.gitBaseUrl.replace(/\/+$/, "")}/${owner}/${repo}.git`;

export const mirrorPath = (options: WorkspaceOptions, { owner, repo }: RepoRef) =>
  path.join(options.dataDir, "mirrors", owner, `${repo}.git`);

export const worktreesRoot = (options: WorkspaceOptions) => path.join(options.dataDir, "worktrees");

const lockKey = (ref: RepoRef) => `${ref.owner}/${ref.repo}`.toLowerCase();

/** Where a CLI's `--worktree <name>` puts its worktree: inside the mirror, not beside Lisa's. */
export const nativeWorktreePath = (options: WorkspaceOptions, ref: RepoRef, name: string) =>
  path.join(mirrorPath(options, ref), ".claude", "worktrees", name);

/** The folders a worktree of `mirror` may be in: Lisa's own, and the CLIs' inside the mirror. */
const workDirRootsOf = (options: WorkspaceOptions, mirror: string): WorkDirRoots => ({
  dataDir: options.dataDir,
  roots: [worktreesRoot(options), path.join(mirror, ".claude", "worktrees")],
});

const workDirRoots = (options: WorkspaceOptions, ref: RepoRef) => workDirRootsOf(options, mirrorPath(options, ref));

/**
 * Removes what an agent planted in the mirror for Lisa's git to follow, and the locks a killed git
 * left there; run under the repository's lock.
 */
async function scrub(options: WorkspaceOptions, ref: RepoRef): Promise<void> {
  const mirror = mirrorPath(options, ref);
  await scrubMirror(mirror, workDirRoots(options, ref));
  if (existsSync(path.join(mirror, "HEAD"))) await clearStaleLocks(mirror, worktreesRoot(options));
}

/**
 * Rewrites the mirror's config, exclude file and hooks from scratch. Agents work in worktrees of
 * this repository and can edit all three; before Lisa runs git with a token, nothing they wrote may
 * redirect the remote, run a program or hide files.
 */
async function resetMirrorConfig(options: WorkspaceOptions, ref: RepoRef): Promise<string> {
  const mirror = mirrorPath(options, ref);
  await scrub(options, ref);
  const config = [
    "[core]",
    "\trepositoryformatversion = 0",
    "\tbare = true",
    '[remote "origin"]',
    `\turl = ${remoteUrl(options, ref)}`,
    "\tfetch = +refs/heads/*:refs/remotes/origin/*",
    "[user]",
    `\tname = ${options.author.name}`,
    `\temail = ${options.author.email}`,
    "[gc]",
    "\tauto = 0",
    "",
  ].join("\n");
  await replaceFile(path.join(mirror, "config"), config);
  // A link planted in place of `info` would have Lisa write where it points.
  const info = path.join(mirror, "info");
  if ((await lstat(info).catch(() => undefined))?.isDirectory() === false) await rm(info, { force: true });
  await mkdir(info, { recursive: true });
  await replaceFile(path.join(info, "exclude"), `${LISA_FILES.join("\n")}\n`);
  await rm(path.join(mirror, "hooks"), { recursive: true, force: true });
  return mirror;
}

/**
 * Writes a file by renaming a complete copy over it. Sessions of the repository run git in the
 * mirror meanwhile (a CLI's own worktree, outside Lisa's lock); a file truncated and then written
 * showed them a config with no remote for a moment.
 */
async function replaceFile(file: string, content: string): Promise<void> {
  const next = `${file}.lisa-${process.pid}-${randomUUID()}`;
  await writeFile(next, content);
  await rename(next, file);
}

/** Creates the bare mirror if needed and fetches every branch with the installation token. */
export function syncMirror(options: WorkspaceOptions, ref: RepoRef, token: string): Promise<string> {
  return withRepoLock(lockKey(ref), async () => {
    const mirror = mirrorPath(options, ref);
    if (!existsSync(path.join(mirror, "HEAD"))) {
      await mkdir(mirror, { recursive: true });
      await git(mirror, ["init", "--bare", "--quiet"]);
    }
    await resetMirrorConfig(options, ref);
    await git(mirror, ["fetch", "--prune", "--quiet", "origin"], { token });
    return mirror;
  });
}

export interface Worktree {
  path: string;
  branch: string;
  /** The commit the branch started from (the base, or the branch's earlier remote head). */
  startSha: string;
  /** True when an existing worktree of an interrupted session was picked up again. */
  reused: boolean;
}

/**
 * Gives a session its worktree on `branch`: the existing one when an interrupted session left it,
 * otherwise a new one from the branch's remote head if it was pushed before, else from `base`.
 */
export function createWorktree(
  options: WorkspaceOptions,
  ref: RepoRef,
  { branch, base, dir, from }: { branch: string; base: string; dir: string; from?: string },
): Promise<Worktree> {
  return withRepoLock(lockKey(ref), async () => {
    const mirror = mirrorPath(options, ref);
    await scrub(options, ref);
    const worktreePath = path.join(worktreesRoot(options), dir);
    const remoteBranch = `refs/remotes/origin/${branch}`;
    const fromRef = from ? `refs/remotes/origin/${from}` : undefined;
    const startRef =
      fromRef && (await refExists(mirror, fromRef))
        ? fromRef
        : (await refExists(mirror, remoteBranch))
          ? remoteBranch
          : `refs/remotes/origin/${base}`;
    if (!(await refExists(mirror, startRef))) {
      throw new Error(`Base branch \`${base}\` does not exist in ${ref.owner}/${ref.repo}`);
    }
    const startSha = (await git(mirror, ["rev-parse", startRef])).trim();
    if (existsSync(path.join(worktreePath, ".git"))) {
      if (checkoutFinished(worktreePath)) return { path: worktreePath, branch, startSha, reused: true };
      // `worktree add` was killed mid-checkout: part of the files are missing, and committing
      // that worktree would delete them in the pull request. It holds no work yet (the agent starts
      // after the checkout), so it is made again.
      await git(mirror, ["worktree", "remove", "--force", "--force", worktreePath]).catch(() => undefined);
    }
    await rm(worktreePath, { recursive: true, force: true });
    await git(mirror, ["worktree", "prune"]);
    await mkdir(path.dirname(worktreePath), { recursive: true });
    await git(mirror, ["worktree", "add", "--quiet", "-B", branch, worktreePath, startSha]);
    return { path: worktreePath, branch, startSha, reused: false };
  });
}

/**
 * Whether the checkout of a worktree ran to its end. git writes the worktree's index last (as
 * `index.lock`, renamed when every file is out), so a worktree with a `.git` file and no index
 * is a checkout that was cut off.
 */
function checkoutFinished(worktreePath: string): boolean {
  const pointer = readFileSync(path.join(worktreePath, ".git"), "utf8").match(/^gitdir: (.+)$/m)?.[1];
  return pointer !== undefined && existsSync(path.join(path.resolve(worktreePath, pointer.trim()), "index"));
}

async function refExists(mirror: string, ref: string): Promise<boolean> {
  try {
    await git(mirror, ["rev-parse", "--verify", "--quiet", ref]);
    return true;
  } catch {
    return false;
  }
}

/** A read-only look at `base`: a detached worktree at `path`, kept if it is already there. */
export function checkoutDetached(
  options: WorkspaceOptions,
  ref: RepoRef,
  { base, path: dir }: { base: string; path: string },
): Promise<void> {
  return withRepoLock(lockKey(ref), async () => {
    if (existsSync(path.join(dir, ".git"))) return;
    const mirror = mirrorPath(options, ref);
    await scrub(options, ref);
    await rm(dir, { recursive: true, force: true });
    await git(mirror, ["worktree", "prune"]);
    await mkdir(path.dirname(dir), { recursive: true });
    await git(mirror, ["worktree", "add", "--quiet", "--detach", dir, `refs/remotes/origin/${base}`]);
  });
}

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

function realpathOr(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/** The branch each worktree of `mirror` has checked out, by the worktree's real path. */
async function checkedOut(mirror: string): Promise<Map<string, string>> {
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

/**
 * Deletes the mirror's local branches no worktree has checked out. The mirror fetches into
 * `refs/remotes/`; a local branch exists only for a worktree, so one without it is what a removal
 * killed before `branch -D` left. Skipped while git works in the mirror: a CLI's `worktree add -b`
 * makes its branch a moment before its worktree.
 */
async function dropOrphanBranches(mirror: string): Promise<void> {
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

/**
 * Pushes the worktree's HEAD to the branch on the remote, by URL so no agent-written config
 * applies, after checking that nothing the push sends holds one of `secrets` or anything shaped
 * like a secret. HEAD is resolved to its commit once: that commit is what is checked and what is
 * pushed (never a tag object, never whatever HEAD points at by the time git pushes).
 * @throws SecretInPushError, and nothing is pushed
 */
export async function pushBranch(
  options: WorkspaceOptions,
  ref: RepoRef,
  worktree: { path: string; branch: string },
  token: string,
  { lease, secrets }: { lease?: string; secrets: readonly string[] },
): Promise<void> {
  return withRepoLock(lockKey(ref), async () => {
    await resetMirrorConfig(options, ref);
    const commit = (await git(worktree.path, ["rev-parse", "--verify", "--end-of-options", "HEAD^{commit}"])).trim();
    await assertNothingSecretUnpushed(worktree.path, secrets, commit);
    // Never a plain force: only Lisa's own WIP refs are replaced, and only if they are where Lisa left them.
    const force = lease === undefined ? [] : [`--force-with-lease=refs/heads/${worktree.branch}:${lease}`];
    await git(
      worktree.path,
      ["push", "--no-verify", "--quiet", ...force, remoteUrl(options, ref), `${commit}:refs/heads/${worktree.branch}`],
      { token },
    );
  });
}

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

/**
 * Replays Lisa's unpublished commits on top of what was pushed to the branch meanwhile (E7). On a
 * conflict the rebase is undone and the conflicting paths returned; human commits are never lost.
 */
export async function rebaseOnto(worktree: string, onto: string): Promise<{ ok: true } | { ok: false; conflicts: string[] }> {
  try {
    await git(worktree, ["rebase", "--quiet", onto]);
    return { ok: true };
  } catch {
    const conflicts = (await git(worktree, ["diff", "--name-only", "--diff-filter=U"]).catch(() => ""))
      .trim()
      .split("\n")
      .filter(Boolean);
    await git(worktree, ["rebase", "--abort"]).catch(() => undefined);
    return { ok: false, conflicts };
  }
}

/** Folders worktrees live in: Lisa's own, and those CLIs make inside each mirror with `--worktree`. */
async function worktreeFolders(options: WorkspaceOptions): Promise<{ folder: string; mirror: string | undefined }[]> {
  const folders: { folder: string; mirror: string | undefined }[] = [{ folder: worktreesRoot(options), mirror: undefined }];
  const mirrors = path.join(options.dataDir, "mirrors");
  for (const owner of existsSync(mirrors) ? await readdir(mirrors) : []) {
    for (const repo of await readdir(path.join(mirrors, owner))) {
      const mirror = path.join(mirrors, owner, repo);
      folders.push({ folder: path.join(mirror, ".claude", "worktrees"), mirror });
    }
  }
  return folders;
}

/** Every worktree folder in the data directory: Lisa's own, and those CLIs made inside the mirrors. */
export async function listWorktrees(options: WorkspaceOptions): Promise<string[]> {
  const found: string[] = [];
  for (const { folder } of await worktreeFolders(options)) {
    for (const entry of existsSync(folder) ? await readdir(folder) : []) found.push(path.join(folder, entry));
  }
  return found;
}

/**
 * Deletes worktrees no active session owns and prunes git's records of them. Run on start-up: a
 * crash can leave both behind. `keep` is asked about each folder as it comes, so a folder made
 * meanwhile (by a run under way) is asked about too.
 */
export async function sweepWorktrees(
  options: WorkspaceOptions,
  keep: { has(folder: string): boolean | Promise<boolean> },
): Promise<string[]> {
  const removed: string[] = [];
  const folders = await worktreeFolders(options);
  for (const { mirror } of folders) {
    // git reads every registration's `gitdir`: one an agent planted (a FIFO would hold git) goes first.
    if (mirror) await scrubMirror(mirror, workDirRootsOf(options, mirror));
  }
  for (const { folder, mirror } of folders) {
    for (const entry of existsSync(folder) ? await readdir(folder) : []) {
      const full = path.join(folder, entry);
      if (await keep.has(full)) continue;
      // The agent writes the mirror's `.claude/`: a link there (or in its place) leads out of Lisa's folders.
      if (!isOwnWorkDir(full, { dataDir: options.dataDir, roots: [folder] })) continue;
      // CLIs lock the worktrees they make; a forced removal unlocks them.
      if (mirror) await git(mirror, ["worktree", "remove", "--force", "--force", full]).catch(() => undefined);
      await rm(full, { recursive: true, force: true });
      removed.push(full);
    }
  }
  for (const { mirror } of folders) {
    if (!mirror) continue;
    // A `worktree add` killed midway leaves its registration locked, and prune passes locked ones by.
    await clearStaleLocks(mirror, worktreesRoot(options)).catch(() => undefined);
    await git(mirror, ["worktree", "prune"]).catch(() => undefined);
  }
  await dropOrphanBranchesIn(options);
  return removed;
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
