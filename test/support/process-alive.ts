import { readdirSync, readFileSync } from "node:fs";

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Whether any process of group `group` is still running (a zombie, dead but not yet reaped, is not). */
export function groupAlive(group: number): boolean {
  return readdirSync("/proc").some((entry) => {
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      return fields[0] !== "Z" && Number(fields[2]) === group;
    } catch {
      return false;
    }
  });
}
