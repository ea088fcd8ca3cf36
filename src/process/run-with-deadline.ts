// Over 250 lines: the deadline, the process-group kill and the bounded output capture guard one child together.
import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { execa } from "execa";
import { forgetChild, recordChild } from "./child-registry.ts";
import { newProcessTag, PROCESS_TAG, signalTagged } from "./tagged-processes.ts";

/** The longest delay `setTimeout` honours; a longer one fires at once, so every timer is clamped to it. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long a process group gets to exit after SIGTERM before it gets SIGKILL. */
export const KILL_GRACE_MS = 3_000;

/** After the process exits, how long its output may still take to arrive before Lisa stops reading. */
const DRAIN_MS = 1_000;

/** A delay `setTimeout` can hold: negative or NaN is 0, anything past ~24.8 days is ~24.8 days. */
export function clampTimer(ms: number): number {
  if (!(ms > 0)) return 0;
  return Math.min(Math.floor(ms), MAX_TIMER_MS);
}

/**
 * A conversation with a running process, begun with its open standard input (which it writes and
 * ends itself): it hears each stdout line as `onLine` does, and is told when the process is over.
 */
export type Conversation = (stdin: Writable) => { line?(line: string): void; end?(): void };

export interface RunWithDeadlineOptions {
  cwd: string;
  /** The whole environment of the process; nothing of Lisa's is added. */
  env: Record<string, string>;
  /**
   * Written to standard input, which is then closed; standard input is empty when omitted. A
   * conversation begins as soon as the process runs.
   */
  input?: string | Conversation | undefined;
  /** Wall-clock deadline of the whole process. */
  timeoutMs: number;
  /** Deadline for silence: no output on stdout or stderr for this long. */
  stallMs?: number | undefined;
  /** Between SIGTERM and SIGKILL at a deadline. */
  graceMs?: number | undefined;
  /** Open file descriptors of this process, handed to the child as its fd 3, 4, … */
  fds?: number[] | undefined;
  /** Bytes kept of each stream; the oldest output is dropped first. */
  maxBuffer?: number | undefined;
  /** How stdout is decoded; `latin1` keeps one character per byte, for output that is counted in bytes. */
  encoding?: "utf8" | "latin1" | undefined;
  /**
   * Outside a sandbox, whose PID namespace would end them: tags the environment (PROCESS_TAG), and
   * ends every tagged process with the group, at a deadline and when the process exits, so one that
   * left the group with `setsid` does not live on.
   */
  sweep?: boolean | undefined;
  /** Told the process group id as soon as the process runs. */
  onSpawn?: ((pid: number) => void) | undefined;
  /** Told each line of stdout (without its newline) as it arrives, for live progress; never told after the result. */
  onLine?: ((line: string) => void) | undefined;
}

export interface DeadlineResult {
  stdout: string;
  stderr: string;
  /** Both streams in the order their chunks arrived. */
  all: string;
  /** Undefined when a signal ended the process or Lisa stopped waiting for it. */
  exitCode: number | undefined;
  /** How it ended: on its own, killed at a deadline, or never started. */
  ending: "exited" | "timeout" | "stalled" | "spawn_failed";
  /** Why it could not start, e.g. ENOENT. */
  spawnError: NodeJS.ErrnoException | undefined;
  durationMs: number;
}

/** Process groups running now, so Lisa can take them all down when it exits. */
const liveGroups = new Set<number>();

/** Sends `signal` to a process group; a group that no longer exists is no error. */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    // Negative pid: the whole group, so the tools the process started die with it.
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** Kills every process group started through `runWithDeadline` that is still running. */
export function killAllGroups(): void {
  for (const pid of liveGroups) killGroup(pid, "SIGKILL");
}

/** Output of one stream, keeping at most `limit` bytes, newest last. */
class Tail {
  readonly #chunks: Buffer[] = [];
  readonly #limit: number;
  #size = 0;
  constructor(limit: number) {
    this.#limit = limit;
  }
  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    while (this.#size > this.#limit && this.#chunks.length > 1) this.#size -= this.#chunks.shift()?.length ?? 0;
  }
  toString(encoding: "utf8" | "latin1" = "utf8"): string {
    return Buffer.concat(this.#chunks).toString(encoding);
  }
}

/** The longest stdout line handed to `onLine`; the rest of a longer one is dropped, so a flood cannot grow memory. */
export const MAX_LINE = 256 * 1024;

/** Splits stdout chunks into lines for each listener; a listener that throws does not disturb the run or the others. */
function lineSplitter(listeners: ((line: string) => void)[]): { push(chunk: Buffer): void; end(): void } {
  // A character split across two chunks is decoded whole.
  const decoder = new StringDecoder("utf8");
  let pending = "";
  let overlong = false;
  const emit = (line: string) => {
    for (const listener of listeners) {
      try {
        listener(line);
      } catch {
        // Progress is a courtesy: the process and its result go on without it.
      }
    }
  };
  return {
    push(chunk) {
      const parts = (pending + decoder.write(chunk)).split("\n");
      pending = parts.pop() ?? "";
      for (const part of parts) {
        if (!overlong) emit(part);
        overlong = false;
      }
      if (pending.length > MAX_LINE) {
        if (!overlong) emit(pending.slice(0, MAX_LINE));
        overlong = true;
        pending = "";
      }
    },
    end() {
      if (pending && !overlong) emit(pending);
      pending = "";
    },
  };
}

/** How much of each stream is kept by default: its last 64 MiB. */
export const OUTPUT_LIMIT = 64 * 1024 * 1024;

/**
 * Runs `file` in its own process group with a total deadline and an optional stall deadline. At a
 * deadline the whole group gets SIGTERM, then SIGKILL after a grace, and Lisa stops reading its
 * output: a child that ignores signals, keeps the pipe open or escapes with `setsid` cannot hold
 * the caller past `timeoutMs + graceMs`. When the process exits on its own, whatever it left in
 * its group is killed too.
 */
export function runWithDeadline(file: string, args: readonly string[], options: RunWithDeadlineOptions): Promise<DeadlineResult> {
  const started = Date.now();
  const grace = clampTimer(options.graceMs ?? KILL_GRACE_MS);
  const limit = options.maxBuffer ?? OUTPUT_LIMIT;
  const tag = options.sweep ? newProcessTag() : undefined;
  const subprocess = execa(file, args, {
    cwd: options.cwd,
    env: tag ? { ...options.env, [PROCESS_TAG]: tag } : options.env,
    extendEnv: false,
    // Node hands numbered descriptors to the child as they are; execa's types only list 0 to 2.
    stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe", ...((options.fds ?? []) as never[])],
    detached: true,
    reject: false,
    buffer: false,
  });
  const pid = subprocess.pid;
  // The group, and the processes that escaped it, as one: both get every signal.
  const signalAll = (signal: NodeJS.Signals) => {
    killGroup(pid, signal);
    if (tag) signalTagged(tag, signal);
  };
  if (pid !== undefined) {
    liveGroups.add(pid);
    recordChild(pid);
    options.onSpawn?.(pid);
  }
  // A child that never reads its input must not fail the run with EPIPE.
  subprocess.stdin?.on("error", () => undefined);
  const conversation = typeof options.input === "function" && subprocess.stdin ? options.input(subprocess.stdin) : undefined;
  if (!conversation) subprocess.stdin?.end(typeof options.input === "string" ? options.input : undefined);

  const stdout = new Tail(limit);
  const stderr = new Tail(limit);
  const all = new Tail(limit);
  const timers = new Set<NodeJS.Timeout>();
  const after = (ms: number, fn: () => void) => {
    const timer = setTimeout(fn, clampTimer(ms));
    timers.add(timer);
    return timer;
  };

  return new Promise((resolve) => {
    let ending: DeadlineResult["ending"] | undefined;
    let exitCode: number | undefined;
    let settled = false;
    // One splitter for whoever listens: live progress and the conversation hear the same bounded lines.
    const listeners = [options.onLine, conversation?.line].filter((listener) => listener !== undefined);
    const lines = listeners.length ? lineSplitter(listeners) : undefined;

    const finish = (spawnError?: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      // What escaped the group does not outlive the command, as in a sandbox's PID namespace.
      if (tag) signalTagged(tag, "SIGKILL");
      lines?.end();
      conversation?.end?.();
      // Whoever still holds the pipes (a `setsid` grandchild) no longer holds Lisa.
      for (const stream of [subprocess.stdin, subprocess.stdout, subprocess.stderr] as (Writable | Readable | null)[])
        stream?.destroy();
      if (pid !== undefined) {
        liveGroups.delete(pid);
        forgetChild(pid);
      }
      resolve({
        stdout: stdout.toString(options.encoding),
        stderr: stderr.toString(),
        all: all.toString(),
        exitCode,
        ending: spawnError ? "spawn_failed" : (ending ?? "exited"),
        spawnError,
        durationMs: Date.now() - started,
      });
    };

    const expire = (kind: "timeout" | "stalled") => {
      if (ending || settled) return;
      ending = kind;
      signalAll("SIGTERM");
      after(grace, () => {
        signalAll("SIGKILL");
        finish();
      });
    };

    after(options.timeoutMs, () => expire("timeout"));
    let stall: NodeJS.Timeout | undefined;
    const armStall = () => {
      if (options.stallMs === undefined || ending) return;
      if (stall) {
        clearTimeout(stall);
        timers.delete(stall);
      }
      stall = after(options.stallMs, () => expire("stalled"));
    };
    armStall();
    const collect = (tail: Tail) => (chunk: Buffer) => {
      tail.push(chunk);
      all.push(chunk);
      armStall();
    };
    subprocess.stdout?.on("data", collect(stdout));
    if (lines) subprocess.stdout?.on("data", (chunk: Buffer) => lines.push(chunk));
    subprocess.stderr?.on("data", collect(stderr));

    subprocess.nodeChildProcess.once("exit", (code) => {
      exitCode = code ?? undefined;
      // The process is done; what it left in its group must not outlive it.
      killGroup(pid, "SIGKILL");
      after(DRAIN_MS, () => finish());
    });
    // Resolves once the process has exited and its output streams have closed (or it never started).
    void subprocess.then((result) => {
      const cause = result.cause as NodeJS.ErrnoException | undefined;
      finish(pid === undefined && cause ? cause : undefined);
    });
  });
}
