import { lstatSync, realpathSync } from "node:fs";
import { lstat, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { readAgentFile } from "./read-agent-file.ts";

/** A registration's `gitdir` is one absolute path; anything longer is not git's. */
const GITDIR_LIMIT = 4096;

/**
 * Where Lisa keeps the worktrees of `mirror`, below its data directory `dataDir`: its own folder of
 * worktrees, and the folder inside the mirror where a CLI's `--worktree` puts its own.
 */
export interface WorkDirRoots {
  dataDir: string;
  roots: string[];
}

/**
 * Whether `dir` is a folder Lisa may read, commit in or remove: strictly inside one of `roots`, and
 * reached from the data directory without a symbolic link (the agent can write links into the
 * mirror's `.claude/`, and a link there would have Lisa delete where it points).
 */
export function isOwnWorkDir(dir: string, { dataDir, roots }: WorkDirRoots): boolean {
  const lexical = path.resolve(dataDir);
  const real = realpathOrUndefined(lexical);
  if (!real) return false;
  const resolved = path.resolve(dir);
  // git records worktrees by their real path; Lisa by the path it was configured with.
  for (const base of new Set([lexical, real])) {
    const under = roots.map((root) => path.join(base, path.relative(lexical, path.resolve(root))));
    if (!under.some((root) => isInside(resolved, root))) continue;
    let existing = resolved;
    while (!lstatSync(existing, { throwIfNoEntry: false })) existing = path.dirname(existing);
    if (lstatSync(existing).isSymbolicLink()) return false;
    return realpathOrUndefined(existing) === path.join(real, path.relative(base, existing));
  }
  return false;
}

function realpathOrUndefined(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(path.resolve(parent), path.resolve(child));
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

/**
 * Takes out of `mirror` what an agent could have planted in its writable parts for Lisa's own git
 * to follow: object alternates (Lisa would read, and push, objects of another repository or of any
 * folder), replace refs (what Lisa reads of a commit would not be what a push sends), commit graphs
 * and multi-pack indexes (a forged one lies about parents and trees), and worktree registrations
 * that point anywhere but a worktree folder of Lisa's (Lisa would take that folder for a worktree,
 * commit in it and remove it). Run under the repository's lock before Lisa's git touches the mirror.
 */
export async function scrubMirror(mirror: string, roots: WorkDirRoots): Promise<void> {
  // `rm` unlinks a link without following it, and a folder's content without leaving it.
  const remove = (target: string) => rm(target, { recursive: true, force: true });
  const info = path.join(mirror, "objects", "info");
  const infoStat = await lstat(info).catch(() => undefined);
  if (infoStat && !infoStat.isDirectory()) await remove(info);
  else if (infoStat) {
    for (const name of ["alternates", "http-alternates", "commit-graph", "commit-graphs"]) {
      if (await lstat(path.join(info, name)).catch(() => undefined)) await remove(path.join(info, name));
    }
  }
  // A link in place of an object folder (`objects/pack`, `objects/ab`) is an alternate by other means.
  for (const entry of await readdir(path.join(mirror, "objects")).catch(() => [] as string[])) {
    const at = path.join(mirror, "objects", entry);
    if ((await lstat(at).catch(() => undefined))?.isSymbolicLink()) await remove(at);
  }
  for (const file of await readdir(path.join(mirror, "objects", "pack")).catch(() => [] as string[])) {
    if (file.startsWith("multi-pack-index")) await remove(path.join(mirror, "objects", "pack", file));
  }
  if (await lstat(path.join(mirror, "refs", "replace")).catch(() => undefined))
    await remove(path.join(mirror, "refs", "replace"));
  const registrations = path.join(mirror, "worktrees");
  if ((await lstat(registrations).catch(() => undefined))?.isDirectory()) {
    for (const id of await readdir(registrations)) {
      const entry = path.join(registrations, id);
      if (!(await isOwnRegistration(entry, roots))) await remove(entry);
    }
  }
}

/** Whether the registration folder `entry` names a worktree `<folder>/.git` in one of Lisa's folders. */
async function isOwnRegistration(entry: string, roots: WorkDirRoots): Promise<boolean> {
  if (!(await lstat(entry)).isDirectory()) return false;
  const file = path.join(entry, "gitdir");
  // One being made (a CLI's `--worktree` in another run, outside Lisa's lock) has none yet; git lists none without it.
  if (!(await lstat(file).catch(() => undefined))) return true;
  const gitdir = (await readAgentFile(file, GITDIR_LIMIT).catch(() => undefined))?.trim();
  // Empty for a moment while `git worktree add` writes it (truncate, then write): one being made.
  if (gitdir === "") return true;
  if (!gitdir || !path.isAbsolute(gitdir) || path.basename(gitdir) !== ".git") return false;
  return isOwnWorkDir(path.dirname(gitdir), roots);
}
