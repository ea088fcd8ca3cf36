import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { runWithDeadline } from "../process/run-with-deadline.ts";
import { bwrapArgs } from "./bwrap-args.ts";
import { resolveExecutable } from "./resolve-executable.ts";
import type { SandboxSettings } from "./sandbox-settings.ts";

/** How to make the sandbox start, or opt out of it; part of every message about a sandbox that cannot start. */
export const SANDBOX_FIX =
  "Install bubblewrap (Debian and Ubuntu: `apt-get install bubblewrap`) and allow unprivileged user namespaces " +
  "(`sysctl kernel.unprivileged_userns_clone=1`; on Ubuntu 23.10 and later also `kernel.apparmor_restrict_unprivileged_userns=0` " +
  "or an AppArmor profile for bwrap). In Docker, start the container with `--security-opt seccomp=unconfined " +
  "--security-opt apparmor=unconfined --security-opt systempaths=unconfined`. See docs/security-model.md. " +
  "Or set LISA_SANDBOX=off to run agents without a sandbox, with access to everything Lisa can read.";

/** Where bubblewrap is, on Lisa's own PATH. */
export function bwrapPath(): string | undefined {
  return resolveExecutable("bwrap", process.env.PATH, "/");
}

let probe: Promise<string | undefined> | undefined;

/** Runs `true` in the sandbox the way every agent runs, and says what failed, if anything. */
async function probeSandbox(): Promise<string | undefined> {
  const bwrap = bwrapPath();
  if (!bwrap) return `Lisa cannot start its sandbox for agents: \`bwrap\` is not on PATH. ${SANDBOX_FIX}`;
  const trueBinary = resolveExecutable("true", "/usr/bin:/bin", "/");
  if (!trueBinary) return "Lisa cannot probe its sandbox: there is no `true` in /usr/bin or /bin.";
  const cwd = await mkdtemp(path.join(tmpdir(), "lisa-probe-"));
  const home = await mkdtemp(path.join(tmpdir(), "lisa-home-"));
  try {
    const args = bwrapArgs({ cwd, home, executable: trueBinary, scope: {}, searchPath: "/usr/bin:/bin" });
    const result = await runWithDeadline(bwrap, [...args, "--", trueBinary], {
      cwd,
      env: { PATH: "/usr/bin:/bin" },
      timeoutMs: 10_000,
    });
    if (result.exitCode === 0) return undefined;
    const detail = result.stderr.trim() || (result.ending === "exited" ? `it exited with ${result.exitCode}` : result.ending);
    return `Lisa cannot start its sandbox for agents (${bwrap}): ${detail}. ${SANDBOX_FIX}`;
  } finally {
    await rm(cwd, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * Why the sandbox `settings` ask for cannot start, or undefined when it can (or is off). Probed
 * once per process: Lisa checks at start-up, and every sandboxed run asks again for free.
 */
export function checkSandbox(settings: Pick<SandboxSettings, "mode">): Promise<string | undefined> {
  if (settings.mode === "off") return Promise.resolve(undefined);
  probe ??= probeSandbox();
  return probe;
}
