import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { lstat, mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { git } from "./git.ts";
import { scrubMirror } from "./mirror-hygiene.ts";
import { withRepoLock } from "./repo-lock.ts";
import { clearStaleLocks } from "./stale-locks.ts";
import {
  LISA_FILES,
  lockKey,
  mirrorPath,
  type RepoRef,
  remoteUrl,
  type WorkspaceOptions,
  workDirRoots,
  worktreesRoot,
} from "./workspace-paths.ts";

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

/**
 * Removes what an agent planted in the mirror for Lisa's git to follow, and the locks a killed git
 * left there; run under the repository's lock.
 */
export async function scrub(options: WorkspaceOptions, ref: RepoRef): Promise<void> {
  const mirror = mirrorPath(options, ref);
  await scrubMirror(mirror, workDirRoots(options, ref));
  if (existsSync(path.join(mirror, "HEAD"))) await clearStaleLocks(mirror, worktreesRoot(options));
}

/**
 * Rewrites the mirror's config, exclude file and hooks from scratch. Agents work in worktrees of
 * this repository and can edit all three; before Lisa runs git with a token, nothing they wrote may
 * redirect the remote, run a program or hide files.
 */
export async function resetMirrorConfig(options: WorkspaceOptions, ref: RepoRef): Promise<string> {
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
