import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "./git-fixtures.ts";

const FAKE_CLAUDE = fileURLToPath(new URL("../fixtures/fake-claude.mjs", import.meta.url));

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
}

export interface RecordedCall {
  n: number;
  args: string[];
  cwd: string;
  prompt: string;
  env: Record<string, string>;
  pid: number;
}

/** A `claude` executable that replays `invocations` in order (the last one repeats), and what it was called with. */
export function createFakeClaude(invocations: FakeInvocation[]) {
  const dir = tempDir("fake-claude");
  const script = path.join(dir, "script.json");
  const log = path.join(dir, "calls.jsonl");
  writeFileSync(script, JSON.stringify({ invocations, log }));
  const binary = path.join(dir, "claude");
  writeFileSync(binary, `#!/bin/sh\nexec "${process.execPath}" "${FAKE_CLAUDE}" "${script}" "$@"\n`);
  chmodSync(binary, 0o755);
  return {
    binary,
    calls(): RecordedCall[] {
      if (!existsSync(log)) return [];
      return readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as RecordedCall);
    },
    /** Pids of a hanging invocation and its child, once it has started. */
    hangingPids(): number[] | undefined {
      const file = `${script}.pids`;
      return existsSync(file) ? readFileSync(file, "utf8").split(" ").map(Number) : undefined;
    },
  };
}
