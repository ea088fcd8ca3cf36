import { z } from "zod";

/** How Lisa contains agents and gate commands, from the environment at start-up. */
export const sandboxSettingsSchema = z.object({
  /** `bwrap` (the default): every agent session and gate command runs in a bubblewrap sandbox. `off`: as Lisa's own user, unconfined. */
  mode: z.enum(["bwrap", "off"], {
    error: (issue) => `LISA_SANDBOX must be "bwrap" or "off", not ${JSON.stringify(issue.input)}`,
  }),
  /** A directory copied into each sandboxed process's fresh, throwaway HOME, e.g. holding `.gemini/settings.json`. */
  homeTemplate: z.string().min(1).optional(),
});

export type SandboxSettings = z.infer<typeof sandboxSettingsSchema>;

/** What one sandboxed process may reach besides the programs it runs. Its working directory is always writable. */
export interface SandboxScope {
  /** More directories it may change, e.g. a planning workspace. */
  writable?: string[] | undefined;
  /**
   * Git mirrors its worktrees belong to. Git writes their objects, refs, logs and worktree records
   * (and Claude Code its `.claude/worktrees`); their config and top level stay read-only.
   */
  mirrors?: string[] | undefined;
  /** Directories it may only read, e.g. the mirrors of the repositories a planning session reads. */
  readOnly?: string[] | undefined;
}

/** Everything `runSandboxed` needs to decide how a process is contained. */
export type Sandbox = SandboxSettings & SandboxScope;

/** The sandbox every process gets when a caller names none: contained, seeing only its working directory. */
export const DEFAULT_SANDBOX: Sandbox = { mode: "bwrap" };

/**
 * Reads `LISA_SANDBOX` (`bwrap` by default, or `off`) and `LISA_AGENT_HOME` (the home template).
 * @throws Error naming the variable and the values it accepts
 */
export function sandboxSettingsFromEnv(env: NodeJS.ProcessEnv): SandboxSettings {
  const parsed = sandboxSettingsSchema.safeParse({
    mode: env.LISA_SANDBOX || "bwrap",
    homeTemplate: env.LISA_AGENT_HOME || undefined,
  });
  if (!parsed.success) throw new Error(z.prettifyError(parsed.error), { cause: parsed.error });
  return parsed.data;
}
