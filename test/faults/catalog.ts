import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { FakeInvocation } from "../../dev/fake-agent.ts";
import { processesMatching } from "../../dev/processes-matching.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { DISK_FULL_FAULTS } from "./disk-full-fault.ts";
import { type FaultScenario, type FaultWorld, quiet } from "./fault-world.ts";

// The faults: Lisa killed at distinct points of single-repository runs, of a run planned across
// two repositories, and of a second pass; its agent killed or stopped; tokens that expire during
// a session; GitHub failing; webhooks delivered again.

const CHANGE: FakeInvocation = {
  write: { "health.ts": "export const health = () => 'ok';\n" },
  manifest: { title: "Add a health check", what: "health() answers ok." },
};
const BLOCKED: FakeInvocation = {
  write: { "health.ts": "export const health = () => 'maybe';\n" },
  manifest: {
    title: "Add a health check",
    what: "Half of health().",
    recommendation: "blocked",
    blocked: { tried: "Two designs.", needed: "Which status codes count as healthy." },
  },
};
const REVISED: FakeInvocation = {
  write: { "health.ts": "export const health = () => 'ok, v2';\n" },
  manifest: { title: "Add a health check", what: "health() answers ok, v2." },
};
/** An agent mid-work, until it is killed. */
const HANGING: FakeInvocation = { write: { "health.ts": "export const he" }, hang: true };
const GATED = "label: lisa\ngates:\n  - test -f health.ts\n";
const WIDE = "label: lisa\nrepos:\n  - repo: acme/api\n  - repo: acme/web\n";
const PLAN: FakeInvocation = {
  write: {
    ".lisa-plan.json": JSON.stringify({
      rationale: "The API serves it; the web page shows it.",
      steps: [
        { repo: "acme/api", order: 1, scope: "Add health()." },
        { repo: "acme/web", order: 2, scope: "Show health()." },
      ],
    }),
  },
  result: "Planned.",
};

/** Kills Lisa right after its `n`th write to GitHub, before GitHub's answer reaches it. */
const killAfterWrite = (n: number) => async (world: FaultWorld) => {
  await world.afterWrite(n, () => world.lisa().kill("SIGKILL"));
  await world.kill();
};

/** Kills Lisa while its agent hangs mid-session. */
async function killMidSession(world: FaultWorld): Promise<void> {
  await waitFor("the agent to start", () => world.agent.hangingPids(), 60_000);
  await world.kill();
}

const singleRepoWrites: FaultScenario[] = Array.from({ length: 9 }, (_, i) => ({
  name: `single-write-${i + 1}`,
  what: `SIGKILL right after write ${i + 1} of 9 of a single-repository run`,
  killPoint: true,
  invocations: [CHANGE],
  config: GATED,
  inflict: killAfterWrite(i + 1),
}));

const singleRepoProcesses: FaultScenario[] = [
  {
    name: "single-mid-ci-wait",
    what: "SIGKILL while Lisa waits for the pull request's CI (its webhook comes while no Lisa listens)",
    killPoint: true,
    invocations: [CHANGE],
    config: GATED,
    prepare: (world) => world.github.setCi(world.repo, [{ name: "test", delayMs: 3_000 }]),
    async inflict(world) {
      // The CI gate's read of the head's latest check runs, whatever the order of its query (it pages).
      const reading = () => world.github.requests().some((r) => /\/check-runs\?(.*&)?filter=latest/.test(r.path)) || undefined;
      await waitFor("Lisa to wait for the head's CI", reading, 60_000);
      await world.kill();
    },
  },
  {
    name: "single-mid-session",
    what: "SIGKILL while the agent works",
    killPoint: true,
    invocations: [HANGING, CHANGE],
    config: GATED,
    inflict: killMidSession,
  },
  {
    name: "single-mid-gate",
    what: "SIGKILL while a gate runs",
    killPoint: true,
    invocations: [CHANGE],
    config: "label: lisa\ngates:\n  - sleep 1.713 && test -f health.ts\n",
    async inflict(world) {
      await waitFor("the gate to run", () => processesOf("sleep 1.713"), 60_000);
      await world.kill();
    },
  },
  {
    name: "single-mid-push",
    what: "SIGKILL while git pushes the step's branch",
    killPoint: true,
    invocations: [CHANGE],
    config: GATED,
    prepare: (world) => slowPushes(world.github.gitDir(world.repo)),
    async inflict(world) {
      const marker = pushMarkers.get(world.github.gitDir(world.repo)) ?? "";
      await waitFor("the push to start", () => existsSync(marker) || undefined, 60_000);
      await world.kill();
    },
  },
];

const multiRepo: FaultScenario[] = [
  {
    name: "multi-mid-planning",
    what: "SIGKILL while the planning session works",
    killPoint: true,
    invocations: [HANGING, PLAN, CHANGE],
    config: WIDE,
    otherRepos: ["acme/web"],
    inflict: killMidSession,
  },
  ...[2, 5, 8, 11, 14].map(
    (n): FaultScenario => ({
      name: `multi-write-${n}`,
      what: `SIGKILL right after write ${n} of a run planned across two repositories`,
      killPoint: true,
      invocations: [PLAN, CHANGE],
      config: WIDE,
      otherRepos: ["acme/web"],
      inflict: killAfterWrite(n),
    }),
  ),
];

/** Waits for pass 1 to stand in review, then asks for a second pass and does `then`. */
const duringPassTwo = (then: (world: FaultWorld) => Promise<void>) => async (world: FaultWorld) => {
  await waitFor("pass 1 to reach review", () => world.tracking().includes("pass 1 · 👀 Ready for review"), 60_000);
  // Pass 1's last writes (the state label, the last tracking edit) may follow the comment's
  // "Ready for review": a write counted for pass 2 must be pass 2's, or the SIGKILL comes before
  // Lisa stored the redirect and GitHub's webhook finds no one. Once Lisa is idle, all is written.
  await world.settle();
  await quiet(world.github);
  const [pull] = world.github.pulls(world.repo);
  if (!pull) throw new Error("pass 1 opened no pull request");
  const harm = then(world);
  await world.github.commentOnIssue(world.repo, pull.number, "/lisa redirect make it say v2", "ann");
  await harm;
};

const passTwo: FaultScenario[] = [
  ...[1, 2, 3, 4].map(
    (n): FaultScenario => ({
      name: `pass2-write-${n}`,
      what: `SIGKILL right after write ${n} of a second pass asked for with /lisa redirect`,
      killPoint: true,
      invocations: [CHANGE, REVISED],
      config: GATED,
      pass: 2,
      inflict: duringPassTwo(killAfterWrite(n)),
    }),
  ),
  {
    name: "pass2-mid-session",
    what: "SIGKILL while the second pass's agent works",
    killPoint: true,
    invocations: [CHANGE, HANGING, REVISED],
    config: GATED,
    pass: 2,
    inflict: duringPassTwo(killMidSession),
  },
  {
    name: "block-package-lost",
    what: "SIGKILL as a blocked second pass's review package leaves, before the store has the run blocked (the pass alone was, before issue 23)",
    killPoint: true,
    invocations: [CHANGE, BLOCKED],
    config: GATED,
    pass: 2,
    ends: "blocked",
    // The package was first written as the step blocked; this is the pass's own edit of it.
    inflict: duringPassTwo((world) =>
      world.killAsWriteLeaves({ method: "PATCH", path: /\/issues\/comments\/\d+$/, body: /lisa:pass run=1 pass=2/ }),
    ),
  },
];

/** Says `/lisa retry` on the issue once the run stopped with a failure or a block. */
async function retryOnceStopped(world: FaultWorld): Promise<void> {
  await waitFor("the run to stop", () => /❌ Failed|⛔ Blocked|Ready for review/.test(world.tracking()), 60_000);
  if (!world.tracking().includes("Ready for review")) {
    await world.github.commentOnIssue(world.repo, world.issue, "/lisa retry", "ann");
  }
}

const otherFaults: FaultScenario[] = [
  {
    name: "deploy-mid-session",
    what: "SIGTERM (a deploy) while the agent works, with a half-second grace",
    invocations: [HANGING, CHANGE],
    config: GATED,
    shutdownGraceMs: 500,
    async inflict(world) {
      await waitFor("the agent to start", () => world.agent.hangingPids(), 60_000);
      await world.kill("SIGTERM");
    },
  },
  {
    name: "agent-killed",
    what: "the agent killed with SIGKILL mid-session; /lisa retry when the run stops",
    invocations: [HANGING, CHANGE],
    config: GATED,
    async inflict(world) {
      const pids = await waitFor("the agent to start", () => world.agent.hangingPids(), 60_000);
      for (const pid of pids) killIfAlive(pid);
      await retryOnceStopped(world);
    },
  },
  {
    name: "agent-stopped",
    what: "the agent stopped with SIGSTOP past a 3 s session_timeout; /lisa retry when the run stops",
    invocations: [HANGING, CHANGE],
    config: `${GATED}limits:\n  session_timeout: 3s\n`,
    async inflict(world) {
      const pids = await waitFor("the agent to start", () => world.agent.hangingPids(), 60_000);
      for (const pid of pids) process.kill(pid, "SIGSTOP");
      await retryOnceStopped(world);
    },
  },
  {
    name: "token-expires-mid-session",
    what: "installation tokens good for git 3 s, a session of 4 s between the fetch and the push",
    invocations: [{ ...CHANGE, run: ["sleep 4"] }],
    config: GATED,
    tokenLifetimeMs: 3_000,
    async inflict() {},
  },
  {
    name: "github-502-on-pull",
    what: "GitHub answers 502 to the first two tries at opening the pull request; the run rides them out",
    invocations: [CHANGE],
    config: GATED,
    async inflict(world) {
      world.github.injectFault({ method: "POST", path: /\/pulls$/, kind: "server_error", times: 2 });
      await retryOnceStopped(world);
    },
  },
  {
    name: "github-secondary-limit-on-comments",
    what: "a secondary rate limit on the first three comment writes",
    invocations: [CHANGE],
    config: GATED,
    async inflict(world) {
      world.github.injectFault({ path: /\/comments(\/\d+)?$/, method: "POST", kind: "secondary_rate_limit", times: 1 });
      world.github.injectFault({ path: /\/comments\/\d+$/, method: "PATCH", kind: "secondary_rate_limit", times: 2 });
    },
  },
  {
    name: "github-429-on-labels",
    what: "a primary rate limit (429) on the first two label writes; /lisa retry if the run stops",
    invocations: [CHANGE],
    config: GATED,
    async inflict(world) {
      world.github.injectFault({ path: /\/labels$/, method: "POST", kind: "rate_limited" });
      world.github.injectFault({ path: /\/labels$/, method: "PUT", kind: "rate_limited" });
      await retryOnceStopped(world);
    },
  },
  {
    name: "label-redelivered",
    what: "the label webhook delivered again, same GUID, while the run works",
    invocations: [CHANGE],
    config: GATED,
    async inflict(world) {
      await world.afterWrite(3, () => undefined);
      await world.github.redeliver(labelDelivery(world));
    },
  },
  {
    name: "label-redelivered-after-restart",
    what: "SIGKILL after write 2, then the label webhook delivered again to the next Lisa",
    invocations: [CHANGE],
    config: GATED,
    async inflict(world) {
      await killAfterWrite(2)(world);
      await world.restart();
      await world.github.redeliver(labelDelivery(world));
    },
  },
  {
    name: "relabeled-mid-run",
    what: "the label taken off (which stops the run, rule 24) and put back (a new delivery) while the agent works; then /lisa redirect",
    invocations: [HANGING, CHANGE],
    config: GATED,
    pass: 2,
    async inflict(world) {
      await waitFor("the agent to start", () => world.agent.hangingPids(), 60_000);
      await world.github.unlabelIssue(world.repo, world.issue, "lisa", "ann");
      await waitFor("the run to stop", () => world.tracking().includes("⏹️ Stopped"), 60_000);
      // Labeled again while its run is open: no second run (rule 1); a redirect goes on with this one.
      await world.github.labelIssue(world.repo, world.issue, "lisa", "ann");
      await world.github.commentOnIssue(world.repo, world.issue, "/lisa redirect go on", "ann");
    },
  },
];

/** A process of this host alive, a zombie aside. */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/**
 * An unsandboxed agent that starts a tool in its own process group (a shell whose command line
 * names the worktree, so the orphan count finds it), writes the tool's pid, and waits for `go` to
 * appear before it finishes: when it exits is the fault's to choose.
 */
function agentLeavingATool(): { invocation: FakeInvocation; toolPid: string; go: string } {
  const dir = tempDir("agent-tool");
  const toolPid = path.join(dir, "tool.pid");
  const go = path.join(dir, "go");
  const invocation: FakeInvocation = {
    ...CHANGE,
    run: [
      `sh -c 'sleep 600; true' agent-tool "$PWD" & echo $! > '${toolPid}.tmp' && mv '${toolPid}.tmp' '${toolPid}'`,
      `while [ ! -e '${go}' ]; do sleep 0.05; done`,
    ],
  };
  return { invocation, toolPid, go };
}

/**
 * Lisa is killed, its agent exits on its own before the next Lisa starts, and the agent's tool
 * lives on in the group of a leader that is gone: the next Lisa's start-up reaper must end it.
 * `killLisa` does the kill and lets the agent exit (`release`), in the order the fault needs.
 */
function exitedAgentOrphan(
  name: string,
  what: string,
  killLisa: (world: FaultWorld, release: () => void, agentExited: () => Promise<void>) => Promise<void>,
): FaultScenario {
  const { invocation, toolPid, go } = agentLeavingATool();
  return {
    name,
    what,
    killPoint: true,
    invocations: [invocation, CHANGE],
    config: GATED,
    sandbox: { mode: "off" },
    async inflict(world) {
      const tool = await waitFor(
        "the agent to start its tool",
        () => existsSync(toolPid) && Number(readFileSync(toolPid, "utf8")),
        60_000,
      );
      const release = () => writeFileSync(go, "");
      const agentExited = () =>
        waitFor("the agent to exit", () => world.agent.processes().length === 0, 10_000).then(() => undefined);
      await killLisa(world, release, agentExited);
      // A tool that died with its agent would leave the reaper nothing to do: the fault would prove nothing.
      if (!isRunning(tool)) throw new Error("the agent's tool ended with its agent, before any Lisa started again");
      await world.restart();
    },
  };
}

const exitedAgentOrphans: FaultScenario[] = [
  exitedAgentOrphan(
    "orphan-agent-exited-after-kill",
    "SIGKILL while an unsandboxed agent works; the agent exits before the restart, its tool (sleep 600) runs on",
    async (world, release, agentExited) => {
      await world.kill();
      release();
      await agentExited();
    },
  ),
  exitedAgentOrphan(
    "orphan-agent-exited-unheard",
    "SIGKILL after an unsandboxed agent exited and before Lisa heard so (Lisa frozen meanwhile), its tool (sleep 600) still running",
    async (world, release, agentExited) => {
      // Frozen, Lisa cannot hear the agent's exit, nor end its group as it does when it hears it.
      world.lisa().kill("SIGSTOP");
      release();
      await agentExited();
      await world.kill();
    },
  ),
];

/**
 * Where Lisa's own git is held, holding its locks, until the fault kills it with Lisa: the git
 * command, and how it is held there.
 */
interface GitHold {
  name: string;
  what: string;
  /** The subcommand held, and the argument after it when that decides (`worktree add`). */
  command: [string, string?];
  /** A `reference-transaction` hook holds the refs of this prefix locked; a filter holds the index instead. */
  refs?: string;
}

const GIT_HOLDS: GitHold[] = [
  {
    name: "fetch",
    what: "inside git fetch, holding a remote-tracking branch's lock",
    command: ["fetch"],
    refs: "refs/remotes/origin/",
  },
  {
    name: "worktree-add",
    what: "inside git worktree add, mid-checkout (registration locked, index.lock held)",
    command: ["worktree", "add"],
  },
  { name: "add", what: "inside git add, holding the worktree's index.lock", command: ["add"] },
  { name: "commit", what: "inside git commit, holding the branch's and HEAD's locks", command: ["commit"], refs: "refs/heads/" },
  {
    name: "branch-delete",
    what: "inside the worktree removal's git branch -D, holding the branch's lock",
    command: ["branch", "-D"],
    refs: "refs/heads/",
  },
];

/**
 * A `git` first on Lisa's PATH that runs the real one, with a hook and filters that hold the
 * command `hold.command` (once) where git holds its locks, and say so in `marker` with their pid.
 * Lisa's own settings turn hooks and attributes off; the stand-in points them at its own.
 */
function heldGit(hold: GitHold): { env: Record<string, string>; marker: string } {
  const dir = tempDir(`held-git-${hold.name}`);
  const marker = path.join(dir, "holding");
  const wait = `echo $$ > '${marker}.tmp' && mv '${marker}.tmp' '${marker}' && exec sleep 600`;
  const hooks = path.join(dir, "hooks");
  mkdirSync(hooks);
  const hook = hold.refs
    ? `[ "$1" = prepared ] && [ -n "$FAULT_HOLD" ] || exit 0\ncase "$(cat)" in *' ${hold.refs}'*) ${wait};; esac\n`
    : "exit 0\n";
  writeFileSync(path.join(hooks, "reference-transaction"), `#!/bin/sh\n${hook}`, { mode: 0o755 });
  const filter = path.join(dir, "filter");
  const holdHere = hold.refs ? "" : `[ -n "$FAULT_HOLD" ] && ${wait}\n`;
  writeFileSync(filter, `#!/bin/sh\n${holdHere}exec cat\n`, { mode: 0o755 });
  writeFileSync(path.join(dir, "attributes"), "* filter=fault\n");
  const bin = path.join(dir, "bin");
  mkdirSync(bin);
  writeFileSync(
    path.join(bin, "git"),
    [
      "#!/bin/sh",
      'sub=""; next=""; skip=0; first=1',
      "for arg do",
      "  if [ $first = 1 ]; then set --; first=0; fi",
      '  case "$arg" in',
      `    core.hooksPath=/dev/null) arg="core.hooksPath=${hooks}";;`,
      `    core.attributesFile=/dev/null) arg="core.attributesFile=${path.join(dir, "attributes")}";;`,
      "  esac",
      "  if [ $skip = 1 ]; then skip=0",
      '  elif [ "$arg" = -c ]; then skip=1',
      '  elif [ -z "$sub" ]; then case "$arg" in -*) ;; *) sub="$arg";; esac',
      '  elif [ -z "$next" ]; then next="$arg"',
      "  fi",
      '  set -- "$@" "$arg"',
      "done",
      `case "$sub/$next" in '${hold.command[0]}/'${hold.command[1] ? `'${hold.command[1]}'` : "*"}) [ -e '${marker}' ] || export FAULT_HOLD=1;; esac`,
      `exec ${realGit()} -c filter.fault.smudge=${filter} -c filter.fault.clean=${filter} "$@"`,
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return { env: { PATH: `${bin}:${process.env.PATH ?? ""}` }, marker };
}

function realGit(): string {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(path.join(dir, "git"))) return path.join(dir, "git");
  }
  throw new Error("no git on PATH");
}

/** The process group of `pid`, from /proc. */
function groupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

const gitKills: FaultScenario[] = GIT_HOLDS.map((hold): FaultScenario => {
  let marker = "";
  return {
    name: `git-kill-${hold.name}`,
    what: `SIGKILL of Lisa and its git together ${hold.what}; restart, and /lisa retry if the run stopped`,
    killPoint: true,
    invocations: [CHANGE],
    config: GATED,
    env() {
      const held = heldGit(hold);
      marker = held.marker;
      return held.env;
    },
    async inflict(world) {
      const pid = await waitFor(
        "git to hold its locks",
        () => (existsSync(marker) ? Number(readFileSync(marker, "utf8")) : undefined),
        60_000,
      );
      // A container kill: Lisa and the git it runs (a process group of its own) die in the same instant.
      const group = groupOf(pid);
      world.lisa().kill("SIGKILL");
      process.kill(-group, "SIGKILL");
      await world.kill();
      await world.restart();
      await retryOnceStopped(world);
    },
  };
});

/** Waits for pass 1 to stand in review and Lisa to have written all of it; the pull request. */
async function inReview(world: FaultWorld): Promise<{ number: number }> {
  await waitFor("pass 1 to reach review", () => world.tracking().includes("pass 1 · 👀 Ready for review"), 60_000);
  // The last tracking edit may follow "Ready for review": writes counted next must be the next change's.
  await world.settle();
  await quiet(world.github);
  const [pull] = world.github.pulls(world.repo);
  if (!pull) throw new Error("pass 1 opened no pull request");
  return pull;
}

/** Once the run waits for review, a writer approves its pull request while `harm` is set up. */
const onApproval = (harm: (world: FaultWorld) => Promise<void>) => async (world: FaultWorld) => {
  const pull = await inReview(world);
  const harmed = harm(world);
  await world.github.submitReview(world.repo, pull.number, { state: "APPROVED", user: "bob" });
  await harmed;
};

/** Once the agent works, `/lisa abort` on the issue while `harm` is set up. */
const onAbort = (harm: (world: FaultWorld) => Promise<void>) => async (world: FaultWorld) => {
  await waitFor("the agent to start", () => world.agent.hangingPids(), 60_000);
  const harmed = harm(world);
  await world.github.commentOnIssue(world.repo, world.issue, "/lisa abort", "ann");
  await harmed;
};

const approver = (world: { github: FaultWorld["github"]; repo: string }) =>
  world.github.addCollaborator(world.repo, "bob", "write");
const MERGING = `${GATED}review:\n  on_accept: merge\n`;
/** The label write that shows `label`, whichever of GitHub's label endpoints it takes. */
const labelWrite = (label: string) => ({ path: /\/labels(\/[^/]+)?$/, body: new RegExp(label) });
/** An agent that dies at once: the run fails. */
const CRASHING: FakeInvocation = { crash: true, stderr: "Segmentation fault" };

/** Kills Lisa right after GitHub put `label` on the issue, before Lisa hears of it. */
const killAfterLabel = (label: string) => async (world: FaultWorld) => {
  await new Promise<void>((resolve) => {
    const stop = world.github.beforeAnswer((request) => {
      if (request.method === "GET" || !request.path.includes("/labels")) return;
      if (!world.github.labels(world.repo, world.issue).includes(label)) return;
      stop();
      world.lisa().kill("SIGKILL");
      resolve();
    });
  });
  await world.kill();
};

/**
 * Kills between a state change Lisa stored and the GitHub writes that show it: as the first write
 * leaves (GitHub never gets it), and after each write that follows. The next Lisa must bring
 * GitHub to what the store says: labels, tracking comment, final report, merge, check runs.
 */
const afterTransitions: FaultScenario[] = [
  {
    name: "review-label-lost",
    what: "SIGKILL as the label that shows the review gate leaves (the store has the run in review)",
    killPoint: true,
    invocations: [CHANGE],
    config: GATED,
    inflict: (world) => world.killAsWriteLeaves(labelWrite("lisa:review")),
  },
  {
    name: "accept-report-lost",
    what: "SIGKILL as the final report leaves, after an approval the store has accepted",
    killPoint: true,
    invocations: [CHANGE],
    config: GATED,
    ends: "accepted",
    prepare: approver,
    inflict: onApproval((world) => world.killAsWriteLeaves({ method: "POST", path: /\/comments$/, body: /lisa:report/ })),
  },
  ...[1, 2, 3].map(
    (n): FaultScenario => ({
      name: `accept-write-${n}`,
      what: `SIGKILL right after write ${n} of 3 that show an approval accepted (report, label, tracking)`,
      killPoint: true,
      invocations: [CHANGE],
      config: GATED,
      ends: "accepted",
      prepare: approver,
      inflict: onApproval(killAfterWrite(n)),
    }),
  ),
  {
    name: "merge-lost",
    what: "SIGKILL as the merge of an approved run leaves (on_accept: merge; the store has it accepted)",
    killPoint: true,
    invocations: [CHANGE],
    config: MERGING,
    ends: "merged",
    prepare: approver,
    inflict: onApproval((world) => world.killAsWriteLeaves({ method: "PUT", path: /\/pulls\/\d+\/merge$/ })),
  },
  ...[1, 2, 3, 4, 5, 6, 7].map(
    (n): FaultScenario => ({
      name: `merge-write-${n}`,
      what: `SIGKILL right after write ${n} of 7 from an approval to a merged run (on_accept: merge)`,
      killPoint: true,
      invocations: [CHANGE],
      config: MERGING,
      ends: "merged",
      prepare: approver,
      inflict: onApproval(killAfterWrite(n)),
    }),
  ),
  {
    name: "merged-label-lost",
    what: "SIGKILL as the accepted label comes off a run the store has as merged",
    killPoint: true,
    invocations: [CHANGE],
    config: MERGING,
    ends: "merged",
    prepare: approver,
    inflict: onApproval((world) => world.killAsWriteLeaves({ method: "DELETE", path: /\/labels\/lisa(%3A|:)accepted$/ })),
  },
  {
    name: "block-label-lost",
    what: "SIGKILL as the label that shows a blocked run leaves (the store has it blocked)",
    killPoint: true,
    invocations: [BLOCKED],
    config: GATED,
    ends: "blocked",
    inflict: (world) => world.killAsWriteLeaves(labelWrite("lisa:blocked")),
  },
  {
    name: "block-write-label",
    what: "SIGKILL right after the label that shows a blocked run",
    killPoint: true,
    invocations: [BLOCKED],
    config: GATED,
    ends: "blocked",
    inflict: killAfterLabel("lisa:blocked"),
  },
  {
    name: "fail-label-lost",
    what: "SIGKILL as the label that shows a failed run leaves (the store has it failed: the agent crashed)",
    killPoint: true,
    invocations: [CRASHING],
    config: GATED,
    ends: "failed",
    inflict: (world) => world.killAsWriteLeaves(labelWrite("lisa:failed")),
  },
  {
    name: "fail-write-label",
    what: "SIGKILL right after the label that shows a failed run",
    killPoint: true,
    invocations: [CRASHING],
    config: GATED,
    ends: "failed",
    inflict: killAfterLabel("lisa:failed"),
  },
  {
    name: "abort-label-lost",
    what: "SIGKILL as the working label comes off a run /lisa abort stopped (the store has it stopped)",
    killPoint: true,
    invocations: [HANGING, CHANGE],
    config: GATED,
    ends: "stopped",
    inflict: onAbort((world) => world.killAsWriteLeaves({ method: "DELETE", path: /\/labels\/lisa(%3A|:)working$/ })),
  },
  ...[1, 2, 3].map(
    (n): FaultScenario => ({
      name: `abort-write-${n}`,
      what: `SIGKILL right after write ${n} of 4 that answer /lisa abort (👀, label, reply, tracking)`,
      killPoint: true,
      invocations: [HANGING, CHANGE],
      config: GATED,
      ends: "stopped",
      inflict: onAbort(killAfterWrite(n)),
    }),
  ),
];

export const FAULTS: FaultScenario[] = [
  ...singleRepoWrites,
  ...singleRepoProcesses,
  ...gitKills,
  ...multiRepo,
  ...passTwo,
  ...afterTransitions,
  ...DISK_FULL_FAULTS,
  ...otherFaults,
  ...exitedAgentOrphans,
];

/** SIGKILLs a process unless it has ended already (Lisa may have stopped the agent first). */
function killIfAlive(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

/** The GUID of the webhook that labeled the issue. */
function labelDelivery(world: FaultWorld): string {
  const delivery = world.github
    .deliveries()
    .find((d) => d.event === "issues" && d.action === "labeled" && (d.payload.sender as { login: string }).login === "ann");
  if (!delivery) throw new Error("no label delivery");
  return delivery.id;
}

function processesOf(marker: string): number[] | undefined {
  const pids = processesMatching(marker);
  return pids.length > 0 ? pids : undefined;
}

/** Per bare repository, the file its pre-receive hook touches when a push begins. */
const pushMarkers = new Map<string, string>();

/** Makes every push to `gitDir` say it began, then take a second before git accepts it. */
function slowPushes(gitDir: string): void {
  const marker = path.join(tempDir("push-marker"), "began");
  pushMarkers.set(gitDir, marker);
  mkdirSync(path.join(gitDir, "hooks"), { recursive: true });
  const hook = path.join(gitDir, "hooks", "pre-receive");
  writeFileSync(hook, `#!/bin/sh\ncat >/dev/null\ntouch '${marker}'\nsleep 1\n`, { mode: 0o755 });
}
