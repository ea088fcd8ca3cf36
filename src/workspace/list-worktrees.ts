import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { type WorkspaceOptions, worktreesRoot } from "./workspace-paths.ts";

/** Folders worktrees live in: Lisa's own, and those CLIs make inside each mirror with `--worktree`. */
export async function worktreeFolders(options: WorkspaceOptions): Promise<{ folder: string; mirror: string | undefined }[]> {
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
