import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { lstat, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { readAgentFile } from "./read-agent-file.ts";

/**
 * Lock files of the repository as a whole that git leaves behind when it is killed holding them,
 * and `packed-refs.new`, the copy git writes under the packed-refs lock (it makes it exclusively:
 * left there, every later deletion of a packed branch fails).
 */
const MIRROR_LOCKS = [
  "packed-refs.lock",
  "packed-refs.new",
  "config.lock",
  "shallow.lock",
  "HEAD.lock",
  "FETCH_HEAD.lock",
  "index.lock",
];

/** A registration's `gitdir` is one absolute path; anything longer is not git's. */
const GITDIR_LIMIT = 4096;

/** Lock files of one worktree, in its registration folder `worktrees/<id>/`. */
const WORKTREE_LOCKS = ["index.lock", "HEAD.lock", "ORIG_HEAD.lock"];

/** A living process, as far as /proc tells: whether it is git, and where it works. */
interface LivingProcess {
  git: boolean;
  /** Its working directory, undefined when /proc does not say. */
  cwd: string | undefined;
  /** Its arguments, read for git processes only. */
  args: string[];
}

/**
 * Every other process on this host. A sandboxed agent's processes are in a PID namespace of their
 * own, but the host's /proc shows them too, with the host paths Lisa bound into the sandbox.
 */
function livingProcesses(): LivingProcess[] {
  const found: LivingProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      // A zombie holds nothing: a killed git whose parent died waits there until init reaps it.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2))) continue;
      const git = readFileSync(`/proc/${entry}/comm`, "utf8").trim().startsWith("git");
      let cwd: string | undefined;
      try {
        cwd = readlinkSync(`/proc/${entry}/cwd`);
      } catch (error) {
        // No working directory at all: the process has let go of its files (it is exiting, its locks gone with it) or is gone.
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        cwd = undefined;
      }
      const args = git ? [...argsOf(entry), ...gitDirsOf(entry)] : [];
      found.push({ git, cwd, args });
    } catch {
      // Gone while Lisa looked.
    }
  }
  return found;
}

/** A process's arguments, with the value of each `--option=value` as one more. */
function argsOf(pid: string): string[] {
  const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  return [...args, ...args.flatMap((arg) => (arg.startsWith("-") && arg.includes("=") ? [arg.slice(arg.indexOf("=") + 1)] : []))];
}

/** Where a git's environment points it (GIT_DIR and the like), when Lisa may read that environment. */
function gitDirsOf(pid: string): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .filter((line) => /^GIT_(DIR|WORK_TREE|COMMON_DIR|INDEX_FILE)=/.test(line))
      .map((line) => line.slice(line.indexOf("=") + 1));
  } catch {
    return [];
  }
}

/** The path and its real path, as a process inside a sandbox reports the real one. */
function spellings(dir: string): string[] {
  try {
    return [...new Set([path.resolve(dir), realpathSync(dir)])];
  } catch {
    return [path.resolve(dir)];
  }
}

function isWithin(child: string, parents: readonly string[]): boolean {
  return parents.some((parent) => {
    const relative = path.relative(parent, child);
    return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
  });
}

/** Whether `process` may be working in one of `places`: its cwd, or for git an argument or GIT_DIR, lies there. */
function worksIn(proc: LivingProcess, places: readonly string[]): boolean {
  // A git whose cwd Lisa cannot read could be anywhere, this repository too.
  if (proc.cwd === undefined) return proc.git;
  if (isWithin(proc.cwd.replace(/ \(deleted\)$/, ""), places)) return true;
  return proc.git && proc.args.some((arg) => path.isAbsolute(arg) && isWithin(arg, places));
}

/** The worktree folder each registration of `mirror` names, by registration folder. */
async function registrations(mirror: string): Promise<{ admin: string; folder: string | undefined }[]> {
  const root = path.join(mirror, "worktrees");
  const found: { admin: string; folder: string | undefined }[] = [];
  for (const id of await readdir(root).catch(() => [] as string[])) {
    const admin = path.join(root, id);
    if (!(await lstat(admin)).isDirectory()) continue;
    // The agent writes `worktrees/`: a link or a FIFO there must neither lead Lisa elsewhere nor hold it.
    const gitdir = ((await readAgentFile(path.join(admin, "gitdir"), GITDIR_LIMIT).catch(() => undefined)) ?? "").trim();
    found.push({ admin, folder: path.isAbsolute(gitdir) ? path.dirname(gitdir) : undefined });
  }
  return found;
}

/**
 * Whether a living git process works in `mirror` or one of its worktrees (a session's git in
 * another run's worktree, a CLI making its own worktree, Lisa's git outside the repository's lock).
 */
export async function gitWorksIn(
  mirror: string,
  living = livingProcesses(),
  registered?: { folder: string | undefined }[],
): Promise<boolean> {
  const places = [mirror, ...(registered ?? (await registrations(mirror))).flatMap(({ folder }) => (folder ? [folder] : []))];
  return living.some((proc) => proc.git && worksIn(proc, places.flatMap(spellings)));
}

/** Every `*.lock` file below `dir`, not following links. */
async function lockFilesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await lockFilesUnder(full)));
    else if (entry.name.endsWith(".lock")) found.push(full);
  }
  return found;
}

/**
 * Removes `file` if it was there before `since`: a lock made after Lisa looked at the processes may
 * belong to a git that started after that look.
 */
async function removeIfOlder(file: string, since: number): Promise<boolean> {
  const stat = await lstat(file).catch(() => undefined);
  if (!stat || stat.mtimeMs >= since) return false;
  await rm(file, { force: true });
  return true;
}

/**
 * Takes out of `mirror` the locks git leaves when it is killed holding them (a container kill takes
 * Lisa's git down with Lisa): `*.lock` files of refs, packed refs, config and shallow; each
 * worktree's `index.lock` and `HEAD.lock`; and the `locked` marker `worktree add` writes first and
 * removes last, on registrations of worktrees in `ownRoot` (Lisa never locks those itself; a CLI
 * locks its own worktrees while it works, so theirs stay unless their folder is gone). Nothing is
 * taken that a living process may hold: a repository-wide lock stays while any git works in the
 * mirror or one of its worktrees, a worktree's while any process works in that worktree or git
 * works in the mirror.
 * Run under the repository's lock. Returns the files removed.
 */
export async function clearStaleLocks(mirror: string, ownRoot: string): Promise<string[]> {
  // Taken before /proc is read: a lock older than this whose git lives was seen living.
  const since = Date.now();
  const living = livingProcesses();
  const registered = await registrations(mirror);
  const mirrorPlaces = spellings(mirror);
  const gitInMirror = living.some((proc) => proc.git && worksIn(proc, mirrorPlaces));
  const gitAnywhere = gitInMirror || (await gitWorksIn(mirror, living, registered));
  const removed: string[] = [];
  const take = async (file: string) => {
    if (await removeIfOlder(file, since)) removed.push(file);
  };
  if (!gitAnywhere) {
    for (const file of await lockFilesUnder(path.join(mirror, "refs"))) await take(file);
    for (const name of MIRROR_LOCKS) await take(path.join(mirror, name));
  }
  const own = spellings(ownRoot);
  for (const { admin, folder } of registered) {
    const places = folder ? spellings(folder) : [];
    if (gitInMirror || living.some((proc) => worksIn(proc, places))) continue;
    for (const name of WORKTREE_LOCKS) await take(path.join(admin, name));
    // Nobody works in a folder that is gone: its registration is pruned once its lock is.
    if (folder && (isWithin(folder, own) || !existsSync(folder))) await take(path.join(admin, "locked"));
  }
  return removed;
}
