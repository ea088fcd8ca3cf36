import type { NetworkTally } from "./egress-proxy.ts";
import type { HostRule } from "./egress-rules.ts";
import type { ModelAccessGrant } from "./model-credentials.ts";

/** How Lisa contains agents and gate commands (`LISA_SANDBOX`, `LISA_AGENT_HOME` at start-up). */
export interface SandboxSettings {
  /** `bwrap` (the default): every agent session and gate command runs in a bubblewrap sandbox. `off`: as Lisa's own user, unconfined. */
  mode: "bwrap" | "off";
  /** A directory copied into each sandboxed process's fresh, throwaway HOME, e.g. holding `.gemini/settings.json`. */
  homeTemplate?: string | undefined;
  /**
   * `isolated` (the default): each sandbox has a network namespace of its own, its only way out
   * Lisa's egress proxy. `shared` keeps the host's network: only the tests' control runs use it.
   */
  network?: "isolated" | "shared" | undefined;
  /**
   * Lets a model API base URL from Lisa's own environment name a loopback or private address
   * (`LISA_ALLOW_PRIVATE_MODEL_API`): that exact host and port, nothing else private.
   */
  privateModelApi?: boolean | undefined;
  /**
   * Hosts the operator lets every sandbox with a network reach even at a private or reserved address
   * (`LISA_EGRESS_ALLOW`: an internal registry or mirror), each exactly `host:port`.
   */
  operatorHosts?: HostRule[] | undefined;
}

/** Where one sandboxed process may connect through Lisa's egress proxy, and where its refusals are counted. */
export interface Egress {
  rules: HostRule[];
  /** Refused connections are added here when the process ends. */
  tally?: NetworkTally | undefined;
  /** Told of each refused connection as it happens. */
  onRefused?: ((host: string, reason: string) => void) | undefined;
  /** Told of each connection let through, with the address it went to. */
  onAllowed?: ((host: string, address: string) => void) | undefined;
  /** The model APIs it reaches through Lisa, which sets their credentials (model-credentials.ts). */
  models?: ModelAccessGrant | undefined;
}

/** What one sandboxed process may reach besides the programs it runs. Its working directory is writable unless `readOnlyCwd`. */
export interface SandboxScope {
  /** Shows the working directory read-only, e.g. to a judge that reads the work and must not change it. */
  readOnlyCwd?: boolean | undefined;
  /** More directories it may change, e.g. a planning workspace. */
  writable?: string[] | undefined;
  /**
   * Git mirrors its worktrees belong to. Git writes their objects, refs, logs and worktree records
   * (and Claude Code its `.claude/worktrees`); their config and top level stay read-only.
   */
  mirrors?: string[] | undefined;
  /** Directories it may only read, e.g. the mirrors of the repositories a planning session reads. */
  readOnly?: string[] | undefined;
  /** Where it may connect, through Lisa's egress proxy. Without it the sandbox has no network at all. */
  egress?: Egress | undefined;
  /** Files written into its fresh HOME over the template's copy, by path relative to it (a CLI's config pointed at Lisa). */
  homeFiles?: Record<string, string> | undefined;
}

/** Everything `runSandboxed` needs to decide how a process is contained. */
export type Sandbox = SandboxSettings & SandboxScope;

/** The sandbox every process gets when a caller names none: contained, seeing only its working directory. */
export const DEFAULT_SANDBOX: Sandbox = { mode: "bwrap" };
