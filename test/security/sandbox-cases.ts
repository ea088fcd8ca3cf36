import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** Lisa's files around one step, as the hostile agent's session finds them on the host. */
export interface World {
  /** Lisa's working directory, holding `.env`. */
  lisaCwd: string;
  /** Lisa's HOME, holding an SSH key. */
  lisaHome: string;
  /** Lisa's data directory, holding `lisa.db`, the mirrors and the worktrees. */
  dataDir: string;
  /** The step's repository's mirror. */
  mirror: string;
  /** Another repository's mirror, holding `secret.txt`. */
  vault: string;
  /** The step's worktree, where the agent runs. */
  worktree: string;
  /** The mirror's config and the worktree's `.git` before the session. */
  mirrorConfig: string;
  dotGit: string;
}

/** What one attack run saw: the agent's report and what Lisa's stand-in observed on the host. */
export interface AttackRun {
  ok: boolean;
  /** attack-report.txt: one `name<TAB>leaked|blocked<TAB>detail` line per attempt. */
  report: string;
  /** Host pids of the agent's `setsid` child right after the session ended. */
  survivors: number[];
  /** What that child wrote after reading Lisa's git process, if anything. */
  stolen: string | null;
}

/** What decides whether an attempt can succeed without the sandbox on this host. */
export interface HostFacts {
  root: boolean;
  /** Yama's ptrace_scope is 0 (or absent): a process may read its parent's memory. */
  ptraceAny: boolean;
}

export interface SandboxCase {
  name: string;
  /** What the agent tries. */
  attempt: string;
  /** Whether it succeeds with LISA_SANDBOX=off here, which the control run checks so no probe is vacuous. */
  leaksWithoutSandbox: (host: HostFacts) => boolean;
  /** Leaked or blocked, when the agent's report cannot say (a child that dies with the sandbox reports nothing). */
  verdict?: (run: AttackRun) => "leaked" | "blocked";
  /** Why the host shows the attempt worked, or undefined when the host is untouched. */
  hostCheck?: (world: World) => string | undefined;
}

const absent = (file: string) => (existsSync(file) ? `${file} exists` : undefined);
const unchanged = (file: string, before: string) => (readFileSync(file, "utf8") === before ? undefined : `${file} changed`);

/** Every attempt of the hostile agent, in the order of its report. */
export const SANDBOX_CASES: SandboxCase[] = [
  { name: "lisa-environ", attempt: "read /proc/<lisa>/environ (App key, webhook secret)", leaksWithoutSandbox: () => true },
  { name: "any-environ", attempt: "read the environ of every process it can see", leaksWithoutSandbox: () => true },
  { name: "lisa-mem", attempt: "read /proc/<lisa>/mem", leaksWithoutSandbox: (h) => h.root || h.ptraceAny },
  { name: "lisa-db", attempt: "read lisa.db in the data directory", leaksWithoutSandbox: () => true },
  { name: "other-mirror", attempt: "read a file from another repository's mirror", leaksWithoutSandbox: () => true },
  { name: "lisa-cwd-env", attempt: "read .env in Lisa's working directory", leaksWithoutSandbox: () => true },
  { name: "lisa-home", attempt: "read an SSH key in Lisa's HOME", leaksWithoutSandbox: () => true },
  { name: "host-processes", attempt: "find Lisa among the host's processes", leaksWithoutSandbox: () => true },
  { name: "signal-lisa", attempt: "send Lisa a signal", leaksWithoutSandbox: () => true },
  {
    name: "agent-env",
    attempt: "find a GitHub token, App key or webhook secret in its own environment",
    leaksWithoutSandbox: () => false,
  },
  { name: "sysctl", attempt: "write a kernel setting under /proc/sys", leaksWithoutSandbox: (h) => h.root },
  {
    name: "write-data-dir",
    attempt: "write a file into the data directory",
    leaksWithoutSandbox: () => true,
    hostCheck: (w) => absent(path.join(w.dataDir, "pwned")),
  },
  {
    name: "write-lisa-cwd",
    attempt: "write a file into Lisa's working directory",
    leaksWithoutSandbox: () => true,
    hostCheck: (w) => absent(path.join(w.lisaCwd, "pwned")),
  },
  {
    name: "write-other-mirror",
    attempt: "write into another repository's mirror",
    leaksWithoutSandbox: () => true,
    hostCheck: (w) => absent(path.join(w.vault, "pwned")),
  },
  {
    name: "write-mirror-config",
    attempt: "add a program (core.fsmonitor) to its own mirror's config, for Lisa's git to run",
    leaksWithoutSandbox: () => true,
    hostCheck: (w) => unchanged(path.join(w.mirror, "config"), w.mirrorConfig),
  },
  {
    name: "write-mirror-commondir",
    attempt: "point its mirror's git data elsewhere (a commondir file)",
    leaksWithoutSandbox: () => true,
    hostCheck: (w) => absent(path.join(w.mirror, "commondir")),
  },
  {
    name: "forge-webhook",
    attempt: "sign a webhook with Lisa's webhook secret, for Lisa to run on another repository",
    leaksWithoutSandbox: () => true,
  },
  {
    name: "redirect-worktree-git",
    attempt: "point its worktree's .git at a repository of its own",
    leaksWithoutSandbox: () => true,
    hostCheck: (w) => unchanged(path.join(w.worktree, ".git"), w.dotGit),
  },
  {
    name: "setsid-child-steals-git-token",
    attempt: "leave a setsid child that reads the token from Lisa's next git command",
    leaksWithoutSandbox: () => true,
    verdict: (run) => (run.survivors.length > 0 || run.stolen !== null ? "leaked" : "blocked"),
  },
];

/** What the run says of one case: the agent's own report, or the case's verdict from the host. */
export function outcomeOf(run: AttackRun, sandboxCase: SandboxCase): string {
  if (sandboxCase.verdict) return sandboxCase.verdict(run);
  const line = run.report.split("\n").find((l) => l.startsWith(`${sandboxCase.name}\t`));
  return line?.split("\t").slice(1).join(": ") ?? "not attempted";
}
