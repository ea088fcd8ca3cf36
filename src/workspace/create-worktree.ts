import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { git } from "./git.ts";
import { withRepoLock } from "./repo-lock.ts";
import { scrub } from "./sync-mirror.ts";
import { lockKey, mirrorPath, type RepoRef, type WorkspaceOptions, worktreesRoot } from "./workspace-paths.ts";

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
    const baseRef = `refs/remotes/origin/${base}`;
    // One git for every candidate: each process costs as much as a small checkout's tenth.
    const refs = await refsIn(mirror, [fromRef, remoteBranch, baseRef]);
    const startRef = fromRef && refs.has(fromRef) ? fromRef : refs.has(remoteBranch) ? remoteBranch : baseRef;
    const startSha = refs.get(startRef);
    if (startSha === undefined) {
      throw new Error(`Base branch \`${base}\` does not exist in ${ref.owner}/${ref.repo}`);
    }
    if (existsSync(path.join(worktreePath, ".git"))) {
      if (checkoutFinished(worktreePath)) return { path: worktreePath, branch, startSha, reused: true };
      // `worktree add` was killed mid-checkout: part of the files are missing, and committing
      // that worktree would delete them in the pull request. It holds no work yet (the agent starts
      // after the checkout), so it is made again.
      await git(mirror, ["worktree", "remove", "--force", "--force", worktreePath]).catch(() => undefined);
    }
    await rm(worktreePath, { recursive: true, force: true });
    await mkdir(path.dirname(worktreePath), { recursive: true });
    const add = () => git(mirror, ["worktree", "add", "--quiet", "-B", branch, worktreePath, startSha]);
    // A worktree removed without git (a killed Lisa, a cleaned disk) stays registered, and holds its
    // path and branch: pruned, and tried once more, only when it is in the way.
    await add().catch(async () => {
      await git(mirror, ["worktree", "prune"]);
      await rm(worktreePath, { recursive: true, force: true });
      await add();
    });
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

/** The commit each of `names` (full ref names) points to in `mirror`; a ref that does not exist is absent. */
async function refsIn(mirror: string, names: (string | undefined)[]): Promise<Map<string, string>> {
  const wanted = names.filter((name) => name !== undefined);
  // Ref names cannot hold glob characters, so each pattern matches its ref (and refs below it, left out here).
  const listed = await git(mirror, ["for-each-ref", "--format=%(objectname) %(refname)", ...wanted]);
  const refs = new Map<string, string>();
  for (const line of listed.split("\n")) {
    const [sha, name] = line.split(" ");
    if (sha && name && wanted.includes(name)) refs.set(name, sha);
  }
  return refs;
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
