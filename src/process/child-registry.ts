import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { processIdentity, sameBoot } from "./process-identity.ts";

/** This process's own folder of running children, once recordChildrenIn has named one. */
let folder: string | undefined;

/**
 * Every process group Lisa starts (git, gates, agents) from now on is written down in `dir`, under a
 * folder of this process's own (its pid and identity), until it ends. A Lisa killed outright leaves
 * the list behind for the next one on this host to reap: unsandboxed, a gate or a git outlives it.
 */
export function recordChildrenIn(dir: string): void {
  const self = processIdentity(process.pid);
  if (!self) return;
  try {
    mkdirSync(path.join(dir, `${process.pid}@${self}`), { recursive: true });
    folder = path.join(dir, `${process.pid}@${self}`);
  } catch {
    // A full data disk: this process's children go unrecorded, as recordChild's do when the disk fills later.
  }
}

export function recordChild(pid: number): void {
  if (!folder) return;
  const identity = processIdentity(pid);
  if (!identity) return;
  const record = path.join(folder, String(pid));
  // Written aside and renamed: a record is whole or absent. An empty one (Lisa killed between
  // creating and writing it, or a full disk) names a group the next Lisa cannot check, so spares.
  const partial = `${record}.partial`;
  try {
    writeFileSync(partial, identity);
    renameSync(partial, record);
  } catch {
    // A full data disk: the child started all the same and is watched; only a killed Lisa's successor misses it.
    rmSync(partial, { force: true });
  }
}

export function forgetChild(pid: number): void {
  if (folder) rmSync(path.join(folder, String(pid)), { force: true });
}

/**
 * Kills the process groups that Lisa processes no longer alive left in `dir`, and clears their
 * lists. A group is killed when its leader is the very process recorded, and also when the leader
 * has exited since (an agent that ended after its Lisa was killed leaves its tools running in its
 * group): the kernel never gives a pid to a new process while a group of that id lives, so a group
 * whose leader is gone in this boot is still the one recorded. A pid that is now another process is
 * spared. A list whose Lisa still runs (another process sharing the data directory) is left alone.
 * Returns the groups signalled.
 */
export function reapOrphans(dir: string): number {
  let killed = 0;
  let owners: string[];
  try {
    owners = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const owner of owners) {
    const [pid = "", identity = ""] = owner.split("@");
    if (processIdentity(Number(pid)) === identity) continue;
    const list = path.join(dir, owner);
    for (const child of readdirSync(list)) {
      const recorded = readFileSync(path.join(list, child), "utf8");
      if (!/^\d+$/.test(child)) continue;
      const now = processIdentity(Number(child));
      const leaderGone = now === undefined && sameBoot(recorded);
      if (now !== recorded && !leaderGone) continue;
      try {
        process.kill(-Number(child), "SIGKILL");
        killed++;
      } catch {
        // Ended meanwhile.
      }
    }
    rmSync(list, { recursive: true, force: true });
  }
  return killed;
}
