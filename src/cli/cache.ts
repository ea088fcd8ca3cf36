import path from "node:path";
import { cacheStats, clearSetupCache, setupCacheRoot, setupCacheSize } from "../workspace/setup-cache.ts";

/** The cache of this data directory (LISA_DATA_DIR, as Lisa has it). */
const rootOf = (env: NodeJS.ProcessEnv) => setupCacheRoot(path.resolve(env.LISA_DATA_DIR || "data"));

/** One line on the set-up cache for `lisa status`: its size, entries, hits and misses. */
export async function describeSetupCache(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const root = rootOf(env);
  const { bytes, entries } = await setupCacheSize(root);
  const { hits, misses } = await cacheStats(root);
  const mib = (bytes / 1024 ** 2).toFixed(1);
  return `set-up cache: ${mib} MiB in ${entries} entr${entries === 1 ? "y" : "ies"}, ${hits} hit(s), ${misses} miss(es) (${root})`;
}

/** `lisa cache clear [owner/repo]`: empties the set-up cache of this host, or one repository's part of it. */
export async function cacheCommand(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [verb, repo, ...extra] = args;
  if (verb !== "clear" || extra.length > 0 || (repo !== undefined && !/^[A-Za-z0-9-]+\/[\w.-]+$/.test(repo))) {
    process.stderr.write("usage: lisa cache clear [owner/repo]\n");
    return 2;
  }
  const [owner = "", name = ""] = repo?.split("/") ?? [];
  const removed = await clearSetupCache(rootOf(env), repo ? { owner, repo: name } : undefined);
  process.stdout.write(`lisa cache clear: removed ${removed} entr${removed === 1 ? "y" : "ies"}${repo ? ` of ${repo}` : ""}\n`);
  return 0;
}
