import { lstat, readdir } from "node:fs/promises";
import path from "node:path";

/**
 * Bytes a folder takes on disk (allocated blocks, so sparse files count for what they hold), with
 * links counted as links and never followed: an agent's link to `/` adds nothing.
 */
export async function diskUsage(dir: string): Promise<number> {
  let bytes = 0;
  const pending = [dir];
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    const stats = await lstat(current).catch(() => undefined);
    if (!stats) continue;
    bytes += stats.blocks * 512;
    if (!stats.isDirectory()) continue;
    const entries = await readdir(current).catch(() => []);
    for (const entry of entries) pending.push(path.join(current, entry));
  }
  return bytes;
}
