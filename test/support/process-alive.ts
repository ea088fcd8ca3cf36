import { readdirSync, readFileSync } from "node:fs";

/** A process's state letter from /proc ("Z" for a zombie), or undefined once it is gone. */
function stateOf(entry: string): { state: string; group: number } | undefined {
  try {
    const fields = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return { state: fields[0] ?? "", group: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/**
 * Whether process `pid` is still running. A zombie is not: it has ended, and only waits for a
 * parent (init, for an orphan) to reap it, which a loaded machine's init may do late.
 */
export function isAlive(pid: number): boolean {
  const found = stateOf(String(pid));
  return found !== undefined && found.state !== "Z";
}

/** Whether any process of group `group` is still running (a zombie, dead but not yet reaped, is not). */
export function groupAlive(group: number): boolean {
  return readdirSync("/proc").some((entry) => {
    const found = stateOf(entry);
    return found !== undefined && found.state !== "Z" && found.group === group;
  });
}
