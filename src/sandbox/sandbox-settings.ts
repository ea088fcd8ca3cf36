/** How Lisa contains agents and gate commands (`LISA_SANDBOX`, `LISA_AGENT_HOME` at start-up). */
export interface SandboxSettings {
  /** `bwrap` (the default): every agent session and gate command runs in a bubblewrap sandbox. `off`: as Lisa's own user, unconfined. */
  mode: "bwrap" | "off";
  /** A directory copied into each sandboxed process's fresh, throwaway HOME, e.g. holding `.gemini/settings.json`. */
  homeTemplate?: string | undefined;
}

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
