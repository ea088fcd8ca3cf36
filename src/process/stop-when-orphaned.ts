import { readFileSync } from "node:fs";

/** How often an `npx`-started Lisa looks whether what started it is still there. */
const CHECK_MS = 500;

/** A process's parent pid and start time (fields 4 and 22 of /proc/<pid>/stat), or undefined when it is gone. */
function statOf(pid: number): { ppid: number; started: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name, in parentheses, may hold spaces: fields are counted after its closing one.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), started: fields[19] ?? "" };
  } catch {
    return undefined;
  }
}

/**
 * Under `npx`, Lisa is started by `sh -c`, started by npm. A signal npm gets reaches that shell and
 * not Lisa: SIGTERM kills the shell, and SIGINT the shell ignores while npm exits. Either way Lisa
 * would go on running, orphaned and listening. When its parent or npm is gone, Lisa sends itself
 * SIGTERM, so the stop it was asked for happens the usual way. Only under npm (`npm_command`): a Lisa
 * left running on purpose (`nohup`, a closed terminal) stays.
 */
export function stopWhenOrphaned(env: NodeJS.ProcessEnv = process.env): void {
  if (!env.npm_command) return;
  const parent = statOf(process.ppid);
  const watched = [process.ppid, parent?.ppid]
    .filter((pid): pid is number => pid !== undefined && pid > 1)
    .map((pid) => ({ pid, started: statOf(pid)?.started }));
  const timer = setInterval(() => {
    if (watched.every(({ pid, started }) => statOf(pid)?.started === started)) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  }, CHECK_MS);
  timer.unref();
}
