import { execa } from "execa";
import { redactSecrets } from "../markdown/redact-secrets.ts";

export interface GateResult {
  command: string;
  passed: boolean;
  /** The tail of the combined output, secrets redacted. */
  output: string;
  durationMs: number;
}

const OUTPUT_TAIL = 6_000;

/**
 * Runs each gate command with `sh -c` in the worktree, in order, stopping at the first failure.
 * Gates get the agent's environment, never Lisa's, since they run code from the repository.
 */
export async function runGates(
  commands: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number; secrets: readonly string[] },
): Promise<GateResult[]> {
  const results: GateResult[] = [];
  for (const command of commands) {
    const started = Date.now();
    const result = await execa("sh", ["-c", command], {
      cwd: options.cwd,
      env: options.env,
      extendEnv: false,
      all: true,
      reject: false,
      timeout: options.timeoutMs,
      killSignal: "SIGKILL",
      stdin: "ignore",
    });
    const timedOut = result.timedOut ? `\n[Lisa stopped this gate after ${Math.round(options.timeoutMs / 1000)}s]` : "";
    const output = redactSecrets(`${String(result.all ?? "").slice(-OUTPUT_TAIL)}${timedOut}`, options.secrets);
    const passed = result.exitCode === 0 && !result.timedOut;
    results.push({ command, passed, output, durationMs: Date.now() - started });
    if (!passed) break;
  }
  return results;
}
