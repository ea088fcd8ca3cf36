// Over 250 lines: the cache's key, store, restore and eviction read one on-disk layout, kept in one place.
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { appendFile, lstat, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { z } from "zod";
import { git } from "./git.ts";
import { LISA_FILES, type RepoRef } from "./workspace-paths.ts";

const run = promisify(execFile);

/** Where the set-up cache lives: in Lisa's data directory, which no sandbox ever shows. */
export const setupCacheRoot = (dataDir: string) => path.join(dataDir, "setup-cache");

/** One repository's entries; owner and name are checked shapes (no `..`), compared lower-case. */
const repoDir = (root: string, ref: RepoRef) => path.join(root, ref.owner.toLowerCase(), ref.repo.toLowerCase());

/** Folders an entry is built in before it is renamed into place: never read as entries. */
const BUILDING = ".building-";
/** An unfinished entry older than this was left by a crash (a store takes minutes at most). */
const ABANDONED_MS = 3_600_000;

/** One byte per lookup, `h` or `m`: appends of a byte are atomic, so concurrent workers lose none. */
const LOOKUPS = "lookups.log";

const entrySchema = z.object({
  /** Paths from the worktree's root that set-up left ignored, each copied whole. */
  paths: z.array(z.string()),
  bytes: z.number(),
  storedAt: z.number(),
});

/**
 * The cache key of a worktree's set-up: the repository, the commands, and the contents of each key
 * file that exists (a missing one counts as missing, so adding a lockfile changes the key).
 */
export async function setupCacheKey(
  worktree: string,
  ref: RepoRef,
  commands: readonly string[],
  keyFiles: readonly string[],
): Promise<string> {
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ repo: `${ref.owner}/${ref.repo}`.toLowerCase(), commands }));
  for (const file of [...keyFiles].sort()) {
    const full = path.join(worktree, file);
    // A key file that is a link, or under one, is not read: it could name a file outside the worktree.
    const content =
      (await insideReal(worktree, file)) && (await lstat(full).catch(() => undefined))?.isFile()
        ? await readFile(full)
        : undefined;
    hash.update(`\0${file}\0${content ? createHash("sha256").update(content).digest("hex") : "-"}`);
  }
  return hash.digest("hex").slice(0, 40);
}

/** Whether every folder above `relative` in `root` is a real folder (no link that leads out of it). */
async function insideReal(root: string, relative: string): Promise<boolean> {
  const parts = relative.split("/").filter(Boolean);
  let current = root;
  for (const part of parts.slice(0, -1)) {
    current = path.join(current, part);
    const info = await lstat(current).catch(() => undefined);
    if (!info?.isDirectory()) return false;
  }
  return true;
}

/** Copies a file or folder, links kept as links; reflinked (copy-on-write) where the file system can. */
async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(path.dirname(to), { recursive: true });
  await run("cp", ["-a", "--reflink=auto", "--", from, to], { maxBuffer: 1024 * 1024 });
}

/** The ignored paths set-up left in `worktree` (whole folders as one path), Lisa's own files left out. */
export async function ignoredPaths(worktree: string): Promise<string[]> {
  const out = await git(worktree, ["status", "--porcelain=v1", "-z", "--ignored=traditional", "--untracked-files=normal"]);
  return out
    .split("\0")
    .filter((line) => line.startsWith("!! "))
    .map((line) => line.slice(3).replace(/\/$/, ""))
    .filter((p) => p && !LISA_FILES.includes(p));
}

export interface StoredEntry {
  key: string;
  paths: string[];
  bytes: number;
}

/**
 * Stores what set-up left ignored in `worktree` as the entry `key` of `ref`. The entry is built in a
 * folder of its own and renamed into place whole, so a crash leaves no entry a later step would use.
 * Another worker storing the same key first wins; this copy is dropped.
 */
export async function storeSetup(root: string, ref: RepoRef, key: string, worktree: string): Promise<StoredEntry | undefined> {
  const dir = repoDir(root, ref);
  await mkdir(dir, { recursive: true });
  await sweepAbandoned(dir);
  const building = path.join(dir, `${BUILDING}${randomBytes(6).toString("hex")}`);
  try {
    const paths: string[] = [];
    for (const relative of await ignoredPaths(worktree)) {
      if (!(await insideReal(worktree, relative))) continue;
      await copyTree(path.join(worktree, relative), path.join(building, "files", relative));
      paths.push(relative);
    }
    await mkdir(building, { recursive: true });
    const bytes = await diskBytes(building);
    const entry = { paths, bytes, storedAt: Date.now() };
    await writeFile(path.join(building, "entry.json"), JSON.stringify(entry));
    try {
      await rename(building, path.join(dir, key));
    } catch (error) {
      // The same key stored meanwhile (ENOTEMPTY/EEXIST): the one there is as good.
      if (!existsSync(path.join(dir, key, "entry.json"))) throw error;
    }
    prepareSpare(path.join(dir, key));
    return { key, paths, bytes };
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

/**
 * Restores entry `key` of `ref` into `worktree`, each stored path as a fresh copy that the worktree
 * owns alone: what its sessions change there never reaches the entry. The copy was made ahead, in
 * the background, from the entry's pristine files (the entry's spare), so a restore only renames
 * it into the worktree and the next spare is made meanwhile; without a spare (two restores at once,
 * another file system) it copies, reflinked where the file system can. False, with nothing copied,
 * when there is no entry or a stored path already exists in the worktree (a tracked file, or a link
 * that could lead the copy out of it).
 */
export async function restoreSetup(root: string, ref: RepoRef, key: string, worktree: string): Promise<boolean> {
  const entryDir = path.join(repoDir(root, ref), key);
  const entry = await readEntry(entryDir);
  if (!entry) return false;
  for (const relative of entry.paths) {
    if (!(await insideReal(worktree, relative))) return false;
    if (await lstat(path.join(worktree, relative)).catch(() => undefined)) return false;
  }
  const taken = await takeSpare(entryDir);
  for (const relative of entry.paths) {
    const to = path.join(worktree, relative);
    if (taken && (await moveInto(path.join(taken, relative), to))) continue;
    await copyTree(path.join(entryDir, "files", relative), to);
  }
  if (taken) await rm(taken, { recursive: true, force: true });
  prepareSpare(entryDir);
  // Its last use, for least-recently-used eviction.
  const now = new Date();
  await utimes(path.join(entryDir, "entry.json"), now, now).catch(() => undefined);
  return true;
}

/** Folders of an entry that are copies under way or taken: never the entry's pristine files. */
const SPARE = "spare";
const SPARE_BUILDING = ".spare-";

/** The entry's spare, renamed out of its place so no other restore takes it too; undefined when there is none. */
async function takeSpare(entryDir: string): Promise<string | undefined> {
  const taken = path.join(entryDir, `${SPARE_BUILDING}taken-${randomBytes(6).toString("hex")}`);
  try {
    await rename(path.join(entryDir, SPARE), taken);
    return taken;
  } catch {
    return undefined;
  }
}

/** Moves one path of a taken spare into the worktree; false when it cannot be renamed there (another file system). */
async function moveInto(from: string, to: string): Promise<boolean> {
  try {
    await mkdir(path.dirname(to), { recursive: true });
    await rename(from, to);
    return true;
  } catch {
    return false;
  }
}

/** Spares being made, so that Lisa can wait for them before it stops (spareCopies). */
const making = new Set<Promise<void>>();

/** Makes the entry's next spare in the background, from its pristine files, unless one is there or under way. */
function prepareSpare(entryDir: string): void {
  const work = (async () => {
    if (existsSync(path.join(entryDir, SPARE))) return;
    const building = path.join(entryDir, `${SPARE_BUILDING}${randomBytes(6).toString("hex")}`);
    try {
      await copyTree(path.join(entryDir, "files"), building);
      await rename(building, path.join(entryDir, SPARE));
    } finally {
      await rm(building, { recursive: true, force: true });
    }
  })().catch(() => undefined);
  making.add(work);
  void work.finally(() => making.delete(work));
}

/** Waits for the spares being made: Lisa stops with none half-copied. */
export async function spareCopies(): Promise<void> {
  while (making.size > 0) await Promise.all([...making]);
}

async function readEntry(entryDir: string): Promise<z.infer<typeof entrySchema> | undefined> {
  try {
    return entrySchema.parse(JSON.parse(await readFile(path.join(entryDir, "entry.json"), "utf8")));
  } catch {
    return undefined;
  }
}

async function diskBytes(dir: string): Promise<number> {
  const { stdout } = await run("du", ["-s", "-B1", "--", dir]);
  return Number(stdout.split(/\s/)[0]) || 0;
}

/** Unfinished entries a crashed store left behind. */
async function sweepAbandoned(dir: string): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(BUILDING)) continue;
    const info = await stat(path.join(dir, name)).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > ABANDONED_MS) await rm(path.join(dir, name), { recursive: true, force: true });
  }
}

export interface CacheEntryInfo {
  repo: string;
  key: string;
  dir: string;
  bytes: number;
  /** When it was last stored or restored. */
  usedAt: number;
}

/** Every whole entry in the cache. */
export async function listEntries(root: string): Promise<CacheEntryInfo[]> {
  const entries: CacheEntryInfo[] = [];
  for (const owner of await readdir(root).catch(() => [] as string[])) {
    if (owner.startsWith(".") || owner === LOOKUPS) continue;
    for (const repo of await readdir(path.join(root, owner)).catch(() => [] as string[])) {
      const dir = path.join(root, owner, repo);
      for (const key of await readdir(dir).catch(() => [] as string[])) {
        if (key.startsWith(BUILDING)) continue;
        const entryDir = path.join(dir, key);
        const entry = await readEntry(entryDir);
        const info = await stat(path.join(entryDir, "entry.json")).catch(() => undefined);
        if (entry && info)
          entries.push({ repo: `${owner}/${repo}`, key, dir: entryDir, bytes: entry.bytes, usedAt: info.mtimeMs });
      }
    }
  }
  return entries;
}

/** Removes the least recently used entries until the cache holds at most `maxBytes`; returns what it removed. */
export async function evictSetupCache(root: string, maxBytes: number): Promise<CacheEntryInfo[]> {
  const entries = (await listEntries(root)).sort((a, b) => a.usedAt - b.usedAt);
  let total = entries.reduce((sum, e) => sum + e.bytes, 0);
  const removed: CacheEntryInfo[] = [];
  for (const entry of entries) {
    if (total <= maxBytes) break;
    await removeEntry(entry.dir);
    total -= entry.bytes;
    removed.push(entry);
  }
  return removed;
}

/** An entry renamed out of the way first, so no step restores from a half-removed one. */
async function removeEntry(entryDir: string): Promise<void> {
  const doomed = path.join(path.dirname(entryDir), `${BUILDING}${randomBytes(6).toString("hex")}`);
  await rename(entryDir, doomed).catch(() => undefined);
  await rm(doomed, { recursive: true, force: true });
}

/** Empties the cache, or one repository's part of it; returns the entries removed. */
export async function clearSetupCache(root: string, ref?: RepoRef): Promise<number> {
  const entries = (await listEntries(root)).filter((e) => !ref || e.repo === `${ref.owner}/${ref.repo}`.toLowerCase());
  for (const entry of entries) await removeEntry(entry.dir);
  return entries.length;
}

/** The cache's size and entries, for `lisa status` and `/metrics`. */
export async function setupCacheSize(root: string): Promise<{ bytes: number; entries: number }> {
  const entries = await listEntries(root);
  return { bytes: entries.reduce((sum, e) => sum + e.bytes, 0), entries: entries.length };
}

/** Counts a restore or a set-up that found no entry, kept beside the cache for `lisa status`. */
export async function recordCacheOutcome(root: string, outcome: "hit" | "miss"): Promise<void> {
  await mkdir(root, { recursive: true });
  await appendFile(path.join(root, LOOKUPS), outcome === "hit" ? "h" : "m");
}

/** Hits and misses since the cache was made. */
export async function cacheStats(root: string): Promise<{ hits: number; misses: number }> {
  const lookups = await readFile(path.join(root, LOOKUPS), "utf8").catch(() => "");
  const hits = lookups.split("h").length - 1;
  return { hits, misses: lookups.length - hits };
}
