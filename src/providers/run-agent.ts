import { execa } from "execa";
import { type AgentResult, failedOutput, type Provider } from "./provider.ts";

export interface RunAgentOptions {
  provider: Provider;
  /** Executable to run; the provider's default name on PATH when omitted. */
  binary?: string | undefined;
  model: string | undefined;
  /** Arguments after the provider's own, e.g. its native worktree flag. */
  extraArgs?: string[];
  cwd: string;
  prompt: string;
  env: Record<string, string>;
  /** Wall-clock deadline of the whole invocation. */
  timeoutMs: number;
  /** Deadline for silence: no output on stdout or stderr for this long. */
  stallMs: number;
  /** Told the agent's process group id as soon as it runs, to be recorded durably. */
  onSpawn?: (pid: number) => void;
}

/** How long a killed agent gets to exit after SIGTERM before its group gets SIGKILL. */
const KILL_GRACE_MS = 3_000;

/** Process groups of agents running now, so Lisa can take them down when it exits. */
const liveGroups = new Set<number>();

/** Kills every agent still running; called when Lisa shuts down, since agents run in their own groups. */
export function killAllAgents(): void {
  for (const pid of liveGroups) killGroup(pid, "SIGKILL");
}

/** Sends `signal` to a process group; a group that no longer exists is no error. */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    // Negative pid: the whole process group, so tools the agent started die with it.
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Runs one agent invocation: the prompt on standard input, its own process group, the allowlisted
 * environment only, and two deadlines (total and stall) that kill the whole group.
 */
export async function runAgent(options: RunAgentOptions): Promise<AgentResult> {
  const { provider } = options;
  const started = Date.now();
  const subprocess = execa(
    options.binary ?? provider.defaultBinary,
    [...provider.args({ model: options.model }), ...(options.extraArgs ?? [])],
    {
      cwd: options.cwd,
      env: options.env,
      extendEnv: false,
      input: options.prompt,
      detached: true,
      reject: false,
      stripFinalNewline: false,
      maxBuffer: 64 * 1024 * 1024,
    },
  );

  if (subprocess.pid !== undefined) {
    liveGroups.add(subprocess.pid);
    options.onSpawn?.(subprocess.pid);
  }
  let deadline: "timeout" | "stalled" | undefined;
  const expire = (kind: "timeout" | "stalled") => {
    if (deadline) return;
    deadline = kind;
    killGroup(subprocess.pid, "SIGTERM");
    setTimeout(() => killGroup(subprocess.pid, "SIGKILL"), KILL_GRACE_MS).unref();
  };
  const total = setTimeout(() => expire("timeout"), options.timeoutMs);
  let stall = setTimeout(() => expire("stalled"), options.stallMs);
  const onOutput = () => {
    clearTimeout(stall);
    stall = setTimeout(() => expire("stalled"), options.stallMs);
  };
  subprocess.stdout?.on("data", onOutput);
  subprocess.stderr?.on("data", onOutput);

  const result = await subprocess;
  clearTimeout(total);
  clearTimeout(stall);
  // The CLI may have left children behind in its group; they must not outlive the invocation.
  killGroup(subprocess.pid, "SIGKILL");
  if (subprocess.pid !== undefined) liveGroups.delete(subprocess.pid);
  const durationMs = Date.now() - started;
  const stdout = String(result.stdout ?? "");
  const stderr = String(result.stderr ?? "");

  if ((result.cause as NodeJS.ErrnoException | undefined)?.code === "ENOENT") {
    const message = `${provider.name} is not installed: \`${options.binary ?? provider.defaultBinary}\` was not found`;
    return { ...failedOutput("not_installed", message, undefined), durationMs };
  }
  if (deadline) {
    const limit = deadline === "timeout" ? options.timeoutMs : options.stallMs;
    const what = deadline === "timeout" ? "did not finish within" : "printed nothing for";
    const partial = provider.parse({ stdout, stderr, exitCode: result.exitCode });
    return {
      ...partial,
      ok: false,
      durationMs,
      failure: { kind: deadline, message: `${provider.name} ${what} ${Math.round(limit / 1000)}s and was killed` },
    };
  }
  return { ...provider.parse({ stdout, stderr, exitCode: result.exitCode }), durationMs };
}
