import { readdirSync, readFileSync } from "node:fs";

/**
 * Pids of this host's processes whose command line contains `marker`. Processes in a sandbox have
 * pids of their own PID namespace; from outside, they are found by what they were started with.
 */
export function processesMatching(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      if (cmdline.includes(marker)) pids.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return pids;
}
