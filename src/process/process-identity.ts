import { readFileSync } from "node:fs";

/**
 * Who process `pid` is, beyond its number: the boot it runs in and when it started (field 22 of
 * `/proc/<pid>/stat`, in clock ticks since boot). Pids are reused: after a reboot, or enough time,
 * a stored pid can be an unrelated process, and killing its group would hit someone else's work.
 * Undefined when there is no such process.
 */
export function processIdentity(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name, field 2, is in parentheses and may hold spaces: count fields after it.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const started = fields[19];
    return started ? `${bootId()}:${started}` : undefined;
  } catch {
    return undefined;
  }
}

/** Whether an identity processIdentity gave was taken in this boot of the machine. */
export function sameBoot(identity: string): boolean {
  return identity.startsWith(`${bootId()}:`);
}

function bootId(): string {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return "unknown-boot";
  }
}
