import { existsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { git } from "./git.ts";
import { worktreeFolders } from "./list-worktrees.ts";
import { isOwnWorkDir, scrubMirror } from "./mirror-hygiene.ts";
import { dropOrphanBranchesIn } from "./orphan-branches.ts";
import { clearStaleLocks } from "./stale-locks.ts";
import { type WorkspaceOptions, workDirRootsOf, worktreesRoot } from "./workspace-paths.ts";

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
