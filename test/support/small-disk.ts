import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import path from "node:path";
import { tempDir } from "../../dev/temp-dir.ts";

// A data disk that fills: a tmpfs of a few megabytes mounted on a folder in a mount namespace of
// its own, kept by a process that holds it. Lisa runs inside it (launcher) and sees the small disk
// where its data directory is; the test reaches the same files through the holder's /proc root.
// Unprivileged where the kernel allows user namespaces (`unshare -rm`), else as root (`unshare -m`).

export interface SmallDisk {
  /** The command prefix that runs a process in the namespace, where the folder is the small disk. */
  launcher: string[];
  /** A path under the folder, as this process reaches it. */
  outside(file: string): string;
  /**
   * Copies of the `files` of `dir` (those that exist) in a folder of this process's own, named as
   * `dir` is. SQLite needs them so: it resolves /proc/<pid>/root back to this process's own root.
   */
  copyOut(dir: string, files: string[]): string;
  /** Fills the disk to its last byte with a file of the test's. */
  fill(): void;
  /** Runs a Node.js script in the namespace, where `dir` is the small disk; returns what it printed. */
  node(script: string, ...args: string[]): string;
  /** Removes what fill() wrote. */
  free(): void;
  /** Ends the holder; the disk goes with the last process in the namespace. */
  release(): void;
}

/** Mounts a tmpfs of `bytes` on `dir` in a namespace of its own; undefined (with why) where neither way is allowed here. */
export async function mountSmallDisk(dir: string, bytes: number): Promise<SmallDisk | { refused: string }> {
  mkdirSync(dir, { recursive: true });
  const refusals: string[] = [];
  for (const flags of [["-r", "-m"], ["-m"]]) {
    const holder = spawn(
      "unshare",
      [
        ...flags,
        "sh",
        "-c",
        'mount -t tmpfs -o "size=$1" tmpfs "$2" && echo mounted && exec cat >/dev/null',
        "sh",
        String(bytes),
        dir,
      ],
      // It holds the disk until its input closes: when the test ends, or dies.
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    const said = await mounted(holder);
    if (said !== true) {
      refusals.push(`unshare ${flags.join(" ")}: ${said}`);
      continue;
    }
    const pid = holder.pid as number;
    const outside = (file: string) => path.join(`/proc/${pid}/root`, path.resolve(dir, file));
    const filler = outside(".filler");
    const launcher = [
      "nsenter",
      "-t",
      String(pid),
      ...(flags.includes("-r") ? ["-U", "--preserve-credentials"] : []),
      "-m",
      `--wd=${process.cwd()}`,
      "--",
    ];
    return {
      launcher,
      outside,
      fill: () => fillToLastByte(filler),
      free: () => rmSync(filler, { force: true }),
      node(script, ...args) {
        const [command = "", ...rest] = [...launcher, process.execPath, "--disable-warning=ExperimentalWarning", script, ...args];
        return execFileSync(command, rest, { encoding: "utf8" });
      },
      copyOut(from, files) {
        const copy = path.join(tempDir("small-disk-copy"), path.basename(from));
        mkdirSync(copy);
        for (const file of files) {
          if (existsSync(outside(path.join(from, file)))) copyFileSync(outside(path.join(from, file)), path.join(copy, file));
        }
        return copy;
      },
      release: () => holder.kill("SIGKILL"),
    };
  }
  return { refused: refusals.join("; ") };
}

/** True once the holder says the tmpfs is mounted; else what it said before it exited. */
function mounted(holder: ChildProcess): Promise<true | string> {
  return new Promise((resolve) => {
    let stderr = "";
    holder.stderr?.on("data", (data) => {
      stderr += data;
    });
    holder.stdout?.once("data", () => resolve(true));
    holder.once("error", (error) => resolve(error.message));
    holder.once("exit", (code) => resolve(stderr.trim() || `exit ${code}`));
  });
}

/** Appends to `file` smaller and smaller writes until not one byte more fits on its disk. */
export function fillToLastByte(file: string): void {
  const fd = openSync(file, "a");
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (let size = chunk.length; size > 0; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
}
