import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

/** The variable that marks every process one unsandboxed command started, as they inherit it. */
export const PROCESS_TAG = "LISA_PROCESS_TAG";

/** A fresh value for PROCESS_TAG. */
export const newProcessTag = (): string => randomUUID();

/**
 * The processes whose environment carries `PROCESS_TAG=tag`: those a command started, including any
 * that left its process group with `setsid` (a new session keeps the environment). Read from
 * `/proc`; none where there is no `/proc`, or for processes of other users.
 */
export function taggedProcesses(tag: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const mark = Buffer.from(`\0${PROCESS_TAG}=${tag}\0`);
  const found: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      // NUL-separated; one in front so the first variable matches like the rest.
      const environ = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]);
      if (environ.includes(mark)) found.push(pid);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** Sends `signal` to every process tagged `tag`; returns how many it reached. */
export function signalTagged(tag: string, signal: NodeJS.Signals): number {
  let reached = 0;
  for (const pid of taggedProcesses(tag)) {
    try {
      process.kill(pid, signal);
      reached += 1;
    } catch {
      // Already gone.
    }
  }
  return reached;
}
