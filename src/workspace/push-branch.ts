import { git } from "./git.ts";
import { withRepoLock } from "./repo-lock.ts";
import { assertNothingSecretUnpushed } from "./scan-unpushed.ts";
import { resetMirrorConfig } from "./sync-mirror.ts";
import { lockKey, type RepoRef, remoteUrl, type WorkspaceOptions } from "./workspace-paths.ts";

/**
 * Pushes the worktree's HEAD to the branch on the remote, by URL so no agent-written config
 * applies, after checking that nothing the push sends holds one of `secrets` or anything shaped
 * like a secret. HEAD is resolved to its commit once: that commit is what is checked and what is
 * pushed (never a tag object, never whatever HEAD points at by the time git pushes). Returns it.
 * @throws SecretInPushError, and nothing is pushed
 */
export async function pushBranch(
  options: WorkspaceOptions,
  ref: RepoRef,
  worktree: { path: string; branch: string },
  token: string,
  { lease, secrets }: { lease?: string; secrets: readonly string[] },
): Promise<string> {
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
    return commit;
  });
}

/**
 * Pushes `commit` of the bare mirror to a new `branch` on the remote, by URL and only if it is new,
 * after the same check for secrets as a worktree's push: a branch that exists already is refused.
 * @throws SecretInPushError, and nothing is pushed
 */
export async function pushCommit(
  options: WorkspaceOptions,
  ref: RepoRef,
  { commit, branch }: { commit: string; branch: string },
  token: string,
  secrets: readonly string[],
): Promise<void> {
  await withRepoLock(lockKey(ref), async () => {
    const mirror = await resetMirrorConfig(options, ref);
    await assertNothingSecretUnpushed(mirror, secrets, commit);
    // An empty lease: the push is refused unless the branch does not exist yet.
    const create = [`--force-with-lease=refs/heads/${branch}:`];
    await git(mirror, ["push", "--no-verify", "--quiet", ...create, remoteUrl(options, ref), `${commit}:refs/heads/${branch}`], {
      token,
    });
  });
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
