import { realpathSync } from "node:fs";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { SandboxError } from "../errors.ts";
import { type DeadlineResult, type RunWithDeadlineOptions, runWithDeadline } from "../process/run-with-deadline.ts";
import { bwrapArgs } from "./bwrap-args.ts";
import { bwrapPath, checkSandbox } from "./check-sandbox.ts";
import { resolveExecutable } from "./resolve-executable.ts";
import { DEFAULT_SANDBOX, type Sandbox } from "./sandbox-settings.ts";

export interface RunSandboxedOptions extends Omit<RunWithDeadlineOptions, "fds"> {
  /** How the process is contained and what it may reach; bubblewrap with only `cwd` writable when omitted. */
  sandbox?: Sandbox | undefined;
}

/** The result of a command that is not there, shaped like one that could not be spawned. */
function notFound(command: string): DeadlineResult {
  const spawnError: NodeJS.ErrnoException = Object.assign(new Error(`spawn ${command} ENOENT`), { code: "ENOENT" });
  return { stdout: "", stderr: "", all: "", exitCode: undefined, ending: "spawn_failed", spawnError, durationMs: 0 };
}

/** A fresh HOME outside Lisa's data directory, holding a copy of the template when there is one. */
async function createHome(template: string | undefined): Promise<string> {
  const home = await mkdtemp(path.join(tmpdir(), "lisa-home-"));
  if (template) await cp(template, home, { recursive: true });
  return home;
}

/**
 * Runs `command` (looked up on the PATH of `options.env`) under `runWithDeadline`, inside a
 * bubblewrap sandbox unless the sandbox is off. Sandboxed, it sees the system's programs, its own
 * install folder and Node's read-only, its working directory and the scope's folders, a private
 * /tmp, and a throwaway HOME; it runs in its own PID namespace, so killing the sandbox at the end
 * or at a deadline ends every process it started, `setsid` ones included.
 * @throws SandboxError when the sandbox is on but cannot start on this host
 */
export async function runSandboxed(
  command: string,
  args: readonly string[],
  options: RunSandboxedOptions,
): Promise<DeadlineResult> {
  const sandbox = options.sandbox ?? DEFAULT_SANDBOX;
  const executable = resolveExecutable(command, options.env.PATH, options.cwd);
  if (!executable) return notFound(command);
  if (sandbox.mode === "off") return runWithDeadline(executable, args, options);

  const problem = await checkSandbox(sandbox);
  const bwrap = bwrapPath();
  if (problem || !bwrap) throw new SandboxError(problem ?? "Lisa cannot start its sandbox for agents: `bwrap` is not on PATH.");
  const home = await createHome(sandbox.homeTemplate);
  try {
    const env: Record<string, string> = { ...options.env, HOME: home, TMPDIR: "/tmp" };
    const files = [env.NODE_EXTRA_CA_CERTS, env.SSL_CERT_FILE].filter((file): file is string => !!file && path.isAbsolute(file));
    const plan = { cwd: options.cwd, home, executable, scope: sandbox, searchPath: env.PATH, files };
    return await runWithDeadline(bwrap, [...bwrapArgs(plan), "--", realpathSync(executable), ...args], { ...options, env });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
