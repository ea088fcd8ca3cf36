import { SandboxError } from "../errors.ts";
import { KILL_GRACE_MS, killAllGroups, killGroup } from "../process/run-with-deadline.ts";
import { runSandboxed } from "../sandbox/run-sandboxed.ts";
import type { Sandbox } from "../sandbox/sandbox-settings.ts";
import { type AgentResult, failedOutput, type Provider } from "./provider.ts";
import { type GuidanceFeed, restartingInput, streamedInput } from "./session-input.ts";
import type { TokenPrices } from "./token-prices.ts";

export { killGroup } from "../process/run-with-deadline.ts";

export interface RunAgentOptions {
  provider: Provider;
  /** Executable to run; the provider's default name on PATH when omitted. */
  binary?: string | undefined;
  model: string | undefined;
  /** Arguments after the provider's own, e.g. its native worktree flag. */
  extraArgs?: string[];
  /** The step's worktree (or planning workspace): where the agent runs, and what it may change. */
  cwd: string;
  prompt: string;
  env: Record<string, string>;
  /** Wall-clock deadline of the whole invocation. */
  timeoutMs: number;
  /** Deadline for silence: no output on stdout or stderr for this long. */
  stallMs: number;
  /**
   * How the agent is contained and what else it may reach, e.g. `{ ...deps.sandbox, mirrors: [mirror] }`.
   * Bubblewrap with only `cwd` visible when omitted.
   */
  sandbox?: Sandbox | undefined;
  /** Told the agent's process group id as soon as it runs, to be recorded durably. */
  onSpawn?: (pid: number) => void;
  /** What tokens cost, for a CLI that reports tokens and no cost. */
  prices?: TokenPrices;
  /** Guidance written while the session runs, given to it the way its provider steers (`Provider.steering`). */
  guidance?: GuidanceFeed | undefined;
  /** Told each line the CLI prints on stdout as it arrives (live progress; untrusted text). */
  onLine?: ((line: string) => void) | undefined;
}

/** Kills every agent and gate still running; called when Lisa shuts down, since they run in their own groups. */
export const killAllAgents = killAllGroups;

/**
 * Runs one agent invocation: the prompt on standard input, in the sandbox, the allowlisted
 * environment only, and two deadlines (total and stall) that end every process it started.
 */
export async function runAgent(options: RunAgentOptions): Promise<AgentResult> {
  const { provider } = options;
  const binary = options.binary ?? provider.defaultBinary;
  let result: Awaited<ReturnType<typeof runSandboxed>>;
  let pid: number | undefined;
  let steered = false;
  let grace: NodeJS.Timeout | undefined;
  // A steer stops the session as a deadline would, SIGTERM then SIGKILL to its group; the worktree's changes stand.
  const stop = () => {
    if (steered) return;
    steered = true;
    killGroup(pid, "SIGTERM");
    grace = setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS);
  };
  const { steering } = provider;
  const input =
    steering.via === "stream"
      ? streamedInput(steering, options.prompt, options.guidance)
      : options.guidance
        ? restartingInput(steering, options.prompt, options.guidance, stop)
        : options.prompt;
  try {
    result = await runSandboxed(binary, [...provider.args({ model: options.model }), ...(options.extraArgs ?? [])], {
      cwd: options.cwd,
      env: options.env,
      input,
      timeoutMs: options.timeoutMs,
      stallMs: options.stallMs,
      sandbox: options.sandbox,
      onSpawn: (spawned) => {
        pid = spawned;
        options.onSpawn?.(spawned);
      },
      onLine: options.onLine,
    });
  } catch (error) {
    if (error instanceof SandboxError) return { ...failedOutput("sandbox", error.message, undefined), durationMs: 0 };
    throw error;
  } finally {
    // Once it has ended its group is gone (runWithDeadline kills what is left): its pid may be anyone's now.
    clearTimeout(grace);
  }
  const { stdout, stderr, exitCode, durationMs } = result;

  if (result.spawnError?.code === "ENOENT") {
    const message = `${provider.name} is not installed: \`${binary}\` was not found`;
    return { ...failedOutput("not_installed", message, undefined), durationMs };
  }
  if (result.ending === "timeout" || result.ending === "stalled") {
    const limit = result.ending === "timeout" ? options.timeoutMs : options.stallMs;
    const what = result.ending === "timeout" ? "did not finish within" : "printed nothing for";
    const partial = provider.parse({ stdout, stderr, exitCode, prices: options.prices });
    return {
      ...partial,
      ok: false,
      durationMs,
      failure: { kind: result.ending, message: `${provider.name} ${what} ${Math.round(limit / 1000)}s and was killed` },
    };
  }
  const parsed = provider.parse({ stdout, stderr, exitCode, prices: options.prices });
  // Stopped for guidance: not a failure of the agent's, and what it did so far stands.
  if (steered) return { ...parsed, ok: false, failure: undefined, steered: true, durationMs };
  return { ...parsed, durationMs };
}
