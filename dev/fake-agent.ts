import { randomUUID } from "node:crypto";
import { chmodSync, copyFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { processesMatching } from "./processes-matching.ts";
import { tempDir } from "./temp-dir.ts";

const FAKE_CLAUDE = fileURLToPath(new URL("./fake-claude.mjs", import.meta.url));

/** What the stand-in does on one invocation. */
export interface FakeInvocation {
  write?: Record<string, string>;
  run?: string[];
  manifest?: unknown;
  result?: string;
  cost?: number;
  isError?: boolean;
  subtype?: string;
  apiErrorStatus?: number;
  exitCode?: number;
  hang?: boolean;
  crash?: boolean;
  /** Written to stderr before a crash, as a CLI's last words. */
  stderr?: string;
  /** Written to stdout before a crash, as the events a CLI streamed before it died. */
  stdout?: string;
  /** The crash is this signal, sent to itself (nothing more on stderr than `stderr`). */
  signal?: "SIGKILL" | "SIGSEGV";
  /** Lines printed on stdout first, each after its delay, as a CLI streams its events; `{{CWD}}` is its working directory. */
  stream?: { delayMs?: number; line: unknown }[];
}

export interface RecordedCall {
  n: number;
  args: string[];
  cwd: string;
  prompt: string;
  env: Record<string, string>;
  /** As the stand-in saw it: inside Lisa's sandbox, a pid of the sandbox's own PID namespace. */
  pid: number;
}

/**
 * A `claude` executable that replays `invocations` in order (the last one repeats), and what it was
 * called with. The stand-in is installed in a folder of its own, as a real CLI is, so it runs in
 * Lisa's sandbox; it reaches this process over a Unix socket in that folder, named in its command
 * line (the sandbox shows the folder, read-only, as it shows a CLI's install folder).
 * With a `version` of 2.1.50 or later, Lisa has it make its own worktree (`--worktree`), as Claude Code does.
 */
export function createFakeClaude(invocations: FakeInvocation[], { version = "1.0.0" }: { version?: string } = {}) {
  const dir = tempDir("fake-claude");
  const socket = path.join(dir, `recorder-${randomUUID().slice(0, 8)}.sock`);
  const calls: RecordedCall[] = [];
  let hanging = false;
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      if (request.url === "/hanging") {
        hanging = true;
        return response.end("{}");
      }
      const n = calls.length;
      calls.push({ n, ...(JSON.parse(body) as Omit<RecordedCall, "n">) });
      response.end(JSON.stringify({ n, step: invocations[Math.min(n, invocations.length - 1)] }));
    });
  });
  server.listen(socket);
  // The stand-in outlives no test; the recorder must not keep the test process alive either.
  server.unref();

  const script = path.join(dir, "fake-claude.mjs");
  copyFileSync(FAKE_CLAUDE, script);
  const binary = path.join(dir, "claude");
  writeFileSync(binary, `#!/bin/sh\nexec "${process.execPath}" "${script}" "${socket}" "${version}" "$@"\n`);
  chmodSync(binary, 0o755);
  return {
    binary,
    calls: (): RecordedCall[] => [...calls],
    /** Host pids of every process of this stand-in still alive (its invocations and their children). */
    processes: (): number[] => processesMatching(socket),
    /** Host pids of a hanging invocation and its child, once it has started. */
    hangingPids(): number[] | undefined {
      const pids = hanging ? processesMatching(socket) : [];
      return pids.length >= 2 ? pids : undefined;
    },
  };
}
