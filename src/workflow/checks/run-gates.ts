import { redactSecrets } from "../../markdown/redact-secrets.ts";
import type { JudgeView } from "../../reporting/views.ts";
import { runSandboxed } from "../../sandbox/run-sandboxed.ts";
import type { Sandbox } from "../../sandbox/sandbox-settings.ts";

export interface GateResult {
  command: string;
  passed: boolean;
  /** The tail of the combined output, secrets redacted. */
  output: string;
  durationMs: number;
  /** Set when the result is a judge's verdict (judges.ts) rather than a command's exit. */
  judge?: JudgeView;
}

const OUTPUT_TAIL = 6_000;

export interface RunGatesOptions {
  /** The step's worktree, where the gates run and what they may change. */
  cwd: string;
  env: Record<string, string>;
  /** Deadline of each gate command, its children included. */
  timeoutMs: number;
  secrets: readonly string[];
  /** Containment, as for the agent: e.g. `{ ...deps.sandbox, mirrors: [mirror] }`; bubblewrap with only `cwd` visible when omitted. */
  sandbox?: Sandbox | undefined;
}

/**
 * Runs each gate command with `sh -c` in the worktree, in order, stopping at the first failure.
 * Gates run code from the repository, so they get the agent's environment and sandbox, never Lisa's.
 * @throws SandboxError when the sandbox is on but cannot start
 */
export async function runGates(commands: readonly string[], options: RunGatesOptions): Promise<GateResult[]> {
  const results: GateResult[] = [];
  for (const command of commands) {
    const result = await runSandboxed("sh", ["-c", command], {
      cwd: options.cwd,
      env: options.env,
      timeoutMs: options.timeoutMs,
      sandbox: options.sandbox,
    });
    const timedOut =
      result.ending === "timeout" ? `\n[Lisa stopped this gate after ${Math.round(options.timeoutMs / 1000)}s]` : "";
    const output = redactSecrets(`${result.all.slice(-OUTPUT_TAIL)}${timedOut}`, options.secrets);
    const passed = result.ending === "exited" && result.exitCode === 0;
    results.push({ command, passed, output, durationMs: result.durationMs });
    if (!passed) break;
  }
  return results;
}
