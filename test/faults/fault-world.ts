import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { assertAllRouted } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { lisaChildIdle, startLisaChild } from "../../dev/lisa-process.ts";
import { processesMatching } from "../../dev/processes-matching.ts";
import { testDatabaseUrl, testStoreLocation } from "../../dev/test-database.ts";
import { createGitHubEmulator, type Fault, type GitHubEmulator, type RecordedRequest } from "../../emulator/github-emulator.ts";
import { HEADLINE } from "../../src/reporting/tracking-comment.ts";
import type { SandboxSettings } from "../../src/sandbox/sandbox-settings.ts";
import type { RunState } from "../../src/store/transitions.ts";
import { tempDir } from "../support/git-fixtures.ts";
import type { SmallDisk } from "../support/small-disk.ts";
import { trackingBody } from "../support/tracking-body.ts";
import { githubBehind } from "./github-behind.ts";

// One fault at a time against Lisa as deployed: a GitHub emulator in this process, Lisa in a
// process of its own that the fault may kill, stop or starve, and a second Lisa on the same data
// started after it. What is counted afterwards is what a user would see on GitHub and an operator
// on the machine.

export const FAULT_SECRET = "fault-suite-secret-of-at-least-32-bytes";

/** What went wrong once the fault was over and Lisa had been given the chance to recover. */
export interface FaultCounts {
  /** Runs that did not reach review with every pull request open. */
  lostRuns: number;
  /** Pull requests beyond one per planned step. */
  duplicatePrs: number;
  /** Lisa's comments that say what another of its comments says (same marker, or same text). */
  duplicateComments: number;
  /** Agent, gate, sandbox or git processes alive after every Lisa had exited. */
  orphans: number;
  /** Worktrees left on disk or registered in a mirror once the run was in review. */
  staleWorktrees: number;
  /** Runs whose labels, tracking comment, report, merge or check runs show less than the store says. */
  githubBehind: number;
}

export interface FaultWorld {
  github: GitHubEmulator;
  agent: ReturnType<typeof createFakeClaude>;
  /** The issue being worked on, `repo#number`. */
  repo: string;
  issue: number;
  dataDir: string;
  /** The Lisa process running now. */
  lisa(): ChildProcess;
  /** Starts another Lisa on the same data, as a restart or the next deploy would. */
  restart(): Promise<void>;
  /** Kills the Lisa running now with `signal` and waits until it has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Calls `act` right after the `n`th write Lisa makes to GitHub from now on (token requests aside), before GitHub answers it. */
  afterWrite(n: number, act: (request: RecordedRequest) => void): Promise<RecordedRequest>;
  /**
   * SIGKILLs Lisa as its next request matching `match` arrives, which GitHub never acts on (the
   * store has the change, GitHub none of it), and resolves once Lisa has exited.
   */
  killAsWriteLeaves(match: Pick<Fault, "method" | "path" | "body">): Promise<void>;
  /** The tracking comment's text on the issue, "" before there is one. */
  tracking(): string;
  /** Waits until the Lisa running now has handled every webhook and has nothing pending, queued or running. */
  settle(): Promise<void>;
}

export interface FaultScenario {
  name: string;
  /** What is done to Lisa, in a few words. */
  what: string;
  /** A SIGKILL of Lisa at a point no other scenario kills at. */
  killPoint?: boolean;
  /** The agent's invocations, in order (planning first for a plan across repositories). */
  invocations: FakeInvocation[];
  /** `.github/lisa.yml` of the issue's repository `acme/api`. */
  config?: string;
  /** Other repositories the plan names; each gets one pull request. */
  otherRepos?: string[];
  tokenLifetimeMs?: number;
  shutdownGraceMs?: number;
  /** Sets up the repositories further (hooks, faults) before the issue is labeled. */
  prepare?(world: Omit<FaultWorld, "issue">): Promise<void> | void;
  /** Does the harm; called right before the issue is labeled, it must set up its triggers at once. */
  inflict(world: FaultWorld): Promise<void>;
  /** The pass the run ends at: 1, or 2 after a redirect. Default 1. */
  pass?: number;
  /** Where the run ends once Lisa recovered: in review by default (accepted, merged, blocked…). */
  ends?: RunState;
  /** The agents' sandbox of every Lisa of the scenario; bubblewrap unless said. */
  sandbox?: SandboxSettings;
  /** Environment of every Lisa of the scenario besides the test's own, made once before the first starts. */
  env?(): Record<string, string>;
  /** A disk of the scenario's own mounted on the data directory, made once before the first Lisa starts; undefined: none here. */
  dataDisk?(dataDir: string): Promise<Pick<SmallDisk, "launcher" | "outside" | "copyOut" | "release"> | undefined>;
}

/** What a whole set of faults counted: every count must be 0. */
export type FaultTotals = FaultCounts & { faults: number; killPoints: number };

/** No fault left a trace. */
export const HELD: FaultCounts = {
  lostRuns: 0,
  duplicatePrs: 0,
  duplicateComments: 0,
  orphans: 0,
  staleWorktrees: 0,
  githubBehind: 0,
};

/** Adds one scenario's counts to `total`. */
export function countFault(total: FaultTotals, scenario: { killPoint?: boolean }, counts: FaultCounts): void {
  total.faults += 1;
  if (scenario.killPoint) total.killPoints += 1;
  for (const key of Object.keys(HELD) as (keyof FaultCounts)[]) total[key] += counts[key];
}

/** The summary line `npm run faults` prints, `what` naming the set ("faults", "scale-out faults"). */
export function faultSummary(total: FaultTotals, what: string): string {
  return `${total.faults} ${what} (${total.killPoints} SIGKILL points), ${total.lostRuns} lost runs, ${total.duplicatePrs} duplicate PRs, ${total.duplicateComments} duplicate comments, ${total.orphans} orphans, ${total.staleWorktrees} stale worktrees, ${total.githubBehind} GitHub behind the store`;
}

const REPO = "acme/api";
/** How long Lisa has to bring a run to review after the fault; not reaching it counts as a lost run. */
const RECOVERY_MS = 90_000;

/** Runs `scenario` and counts what went wrong. */
export async function sufferFault(scenario: FaultScenario): Promise<FaultCounts> {
  const github = createGitHubEmulator({
    reposRoot: tempDir("fault-repos"),
    webhookSecret: FAULT_SECRET,
    ...(scenario.tokenLifetimeMs ? { tokenLifetimeMs: scenario.tokenLifetimeMs } : {}),
  });
  await github.start();
  const agent = createFakeClaude(scenario.invocations);
  const dataDir = path.join(tempDir("fault-data"), "lisa");
  const children: (ChildProcess & { port: number })[] = [];
  const env = scenario.env?.() ?? {};
  const disk = await scenario.dataDisk?.(dataDir);
  // A store on the scenario's disk is read from a copy (on PostgreSQL, it is not on the disk).
  const storeLocation = () =>
    testStoreLocation(disk && !testDatabaseUrl(dataDir) ? disk.copyOut(dataDir, ["lisa.db", "lisa.db-wal"]) : dataDir);
  const start = async () => {
    children.push(
      await startLisaChild(github, {
        dataDir,
        claudeBinary: agent.binary,
        secret: FAULT_SECRET,
        // As deployed: Octokit sends a request GitHub failed again before Lisa hears of it.
        githubRetries: true,
        env,
        ...(scenario.sandbox ? { sandbox: scenario.sandbox } : {}),
        ...(disk ? { launcher: disk.launcher } : {}),
        ...(scenario.shutdownGraceMs === undefined ? {} : { shutdownGraceMs: scenario.shutdownGraceMs }),
      }),
    );
  };
  const current = () => {
    const child = children.at(-1);
    if (!child) throw new Error("no Lisa started");
    return child;
  };
  try {
    const repos = [REPO, ...(scenario.otherRepos ?? [])];
    for (const repo of repos) {
      await github.createRepo(repo, { files: { "README.md": "# Service\n" }, config: scenario.config ?? "label: lisa\n" });
      github.addCollaborator(repo, "ann", "write");
    }
    let issueNumber = 0;
    const world: FaultWorld = {
      github,
      agent,
      repo: REPO,
      get issue() {
        return issueNumber;
      },
      dataDir,
      lisa: current,
      restart: start,
      async kill(signal = "SIGKILL") {
        const child = current();
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((resolve) => child.once("exit", resolve));
          child.kill(signal);
          await exited;
        }
      },
      afterWrite(n, act) {
        let writes = 0;
        return new Promise((resolve) => {
          const stop = github.beforeAnswer((request) => {
            if (!isWrite(request) || ++writes < n) return;
            stop();
            act(request);
            resolve(request);
          });
        });
      },
      tracking: () => trackingBody(github, REPO, issueNumber),
      async settle() {
        // As EmulatedLisa.settle: Lisa's own writes send webhooks too, until neither side has anything under way.
        for (let i = 0; i < 5; i++) {
          await github.waitForWebhooks();
          await lisaChildIdle(current().port);
        }
      },
      async killAsWriteLeaves(match) {
        await new Promise<void>((resolve) => {
          const onHit = () => {
            current().kill("SIGKILL");
            resolve();
          };
          github.injectFault({ ...match, kind: "hang", onHit });
        });
        await world.kill();
      },
    };
    await scenario.prepare?.(world);
    await start();
    // The harm is set up before the label, so that it can catch Lisa's very first write.
    const harm = scenario.inflict(world).then(
      () => undefined,
      (error: unknown) => error,
    );
    const issue = await github.createIssue(REPO, { title: "Add a health check", body: "Add health().", user: "ann" });
    issueNumber = issue.number;
    await github.labelIssue(REPO, issue.number, "lisa", "ann");
    const failed = await harm;
    if (failed) throw failed;
    if (current().exitCode !== null || current().signalCode !== null) await start();

    const ends = scenario.ends ?? "review";
    const reached = await reachedEnd(world, repos, scenario.pass ?? 1, ends);
    // Lisa brings GitHub to the store by itself, within the recovery time too (workers sharing a
    // store leave a change a few seconds to the process that made it): what lags after that counts.
    if (reached) await caughtUp(github, storeLocation);
    // What a person would read on the issue, to see why the run did not recover.
    if (!reached) console.log(`${scenario.name}: not ${ends}; the issue says:\n${world.tracking()}`);
    // Failed and blocked runs keep their worktrees on purpose, for `/lisa retry` and `/lisa fix`.
    const stale = reached && !KEEPS_WORKTREES.has(ends) ? await staleWorktreesIn(disk?.outside(dataDir) ?? dataDir) : [];
    for (const line of stale) console.log(`${scenario.name}: stale: ${line}`);
    // Every Lisa stops as a deploy would stop it; what still runs afterwards has no owner.
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    }
    await github.waitForWebhooks();
    // A request Lisa made that no route of the emulator answers fails the scenario, as in every emulated test.
    assertAllRouted(github);
    return {
      lostRuns: reached ? 0 : 1,
      duplicatePrs: repos.reduce((extra, repo) => extra + Math.max(0, github.pulls(repo).length - 1), 0),
      duplicateComments: duplicateComments(github, repos),
      orphans: await orphansOf(dataDir, agent, (line) => console.log(`${scenario.name}: ${line}`)),
      staleWorktrees: stale.length,
      githubBehind: await githubBehind(github, storeLocation(), (line) =>
        console.log(`${scenario.name}: GitHub behind the store: ${line}`),
      ),
    };
  } finally {
    for (const child of children) child.kill("SIGKILL");
    disk?.release();
    await github.stop();
  }
}

/**
 * A change Lisa asked GitHub for; minting a token is not. GraphQL is left out: the request log does
 * not tell a read (reviewDecision) from a draft mutation, so kill points count REST writes.
 */
function isWrite(request: RecordedRequest): boolean {
  return request.method !== "GET" && !request.path.endsWith("/access_tokens") && request.path !== "/graphql";
}

/** Where a run ends whose worktrees stay on disk. */
const KEEPS_WORKTREES: ReadonlySet<RunState> = new Set(["failed", "blocked"]);
/** Where a run ends that has delivered a pull request in every planned repository. */
const DELIVERED: ReadonlySet<RunState> = new Set(["review", "accepted", "merged"]);

/** Waits for the run to stand at `ends` at `pass` (with a pull request in every repository once delivered), and Lisa to fall quiet. */
async function reachedEnd(world: FaultWorld, repos: string[], pass: number, ends: RunState): Promise<boolean> {
  const deadline = Date.now() + RECOVERY_MS;
  while (Date.now() < deadline) {
    const ready = world.tracking().includes(`pass ${pass} · ${HEADLINE[ends]}`);
    if (ready && (!DELIVERED.has(ends) || repos.every((repo) => world.github.pulls(repo).length > 0))) {
      await quiet(world.github);
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** How long GitHub may lag the store once the run stands where it ends. */
const CATCH_UP_MS = 30_000;

/** Waits, up to CATCH_UP_MS, until GitHub shows what the store says of every run. */
export async function caughtUp(github: GitHubEmulator, storeLocation: string | (() => string)): Promise<void> {
  const where = typeof storeLocation === "string" ? () => storeLocation : storeLocation;
  const deadline = Date.now() + CATCH_UP_MS;
  while ((await githubBehind(github, where())) > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/** Waits until the emulator has had no request for `ms` and no webhook is under way: Lisa's last edits are in. */
export async function quiet(github: GitHubEmulator, ms = 1_000): Promise<void> {
  let seen = github.requests().length;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await github.waitForWebhooks();
    const now = github.requests().length;
    if (now === seen) return;
    seen = now;
  }
}

/** Lisa's comments on the issue and its pull requests that repeat another's marker, or its whole text. */
export function duplicateComments(github: GitHubEmulator, repos: string[]): number {
  let duplicates = 0;
  for (const repo of repos) {
    for (const issue of github.issues(repo)) {
      const keys = github
        .comments(repo, issue.number)
        .filter((comment) => comment.user.type === "Bot")
        .map((comment) => /^<!-- lisa:[^>]*-->/.exec(comment.body)?.[0] ?? comment.body);
      duplicates += keys.length - new Set(keys).size;
    }
  }
  return duplicates;
}

/**
 * Processes of the agent, or with Lisa's data directory in their command line (sandboxes, gates, git),
 * still alive; each is told to `report` with its parent, state and command line, as a count alone
 * cannot say whose it was.
 */
export async function orphansOf(
  dataDir: string,
  agent: ReturnType<typeof createFakeClaude>,
  report: (line: string) => void = console.log,
): Promise<number> {
  // A sandbox dies with its Lisa, but not in the same instant, and later on a machine as loaded as
  // CI's (5 s counted one there once, which three runs since did not repeat). One that outlives its
  // Lisa for good is counted all the same, and named.
  const deadline = Date.now() + 15_000;
  let alive = [...new Set([...processesMatching(dataDir), ...agent.processes()])];
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    alive = [...new Set([...processesMatching(dataDir), ...agent.processes()])];
  }
  for (const pid of alive) report(`orphan: ${describeProcess(pid)}`);
  return alive.length;
}

/** `pid (parent ppid, state S): command line`, read from /proc, or that it is gone. */
function describeProcess(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after the command's name, which may hold spaces: state, parent.
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    return `${pid} (parent ${ppid}, state ${state}): ${cmdline.slice(0, 300)}`;
  } catch {
    return `${pid} (gone as it was read)`;
  }
}

/**
 * Worktree folders left in the data directory, worktrees other than the mirror itself that its git
 * still lists, and local branches of the mirror no worktree has checked out: one line each.
 */
export async function staleWorktreesIn(dataDir: string): Promise<string[]> {
  const entries = (folder: string) => (existsSync(folder) ? readdirSync(folder) : []);
  const stale = entries(path.join(dataDir, "worktrees")).map((name) => `worktree folder ${name}`);
  const mirrors = path.join(dataDir, "mirrors");
  for (const owner of entries(mirrors)) {
    for (const repo of entries(path.join(mirrors, owner))) {
      const mirror = path.join(mirrors, owner, repo);
      stale.push(...entries(path.join(mirror, ".claude", "worktrees")).map((name) => `native worktree ${owner}/${repo} ${name}`));
      const listed = await execa("git", ["--git-dir", mirror, "worktree", "list", "--porcelain"], { reject: false });
      const worktrees = listed.stdout.split("\n").filter((line) => line.startsWith("worktree "));
      stale.push(...worktrees.slice(1).map((line) => `registered ${owner}/${repo} ${line.slice(9)}`));
      // A local branch is a worktree's; one no worktree has checked out is what a removal cut short left.
      const checkedOut = new Set(
        listed.stdout
          .split("\n")
          .filter((line) => line.startsWith("branch "))
          .map((line) => line.slice(7)),
      );
      const branches = await execa("git", ["--git-dir", mirror, "for-each-ref", "--format=%(refname)", "refs/heads/"], {
        reject: false,
      });
      stale.push(
        ...branches.stdout
          .split("\n")
          .filter((ref) => ref && !checkedOut.has(ref))
          .map((ref) => `branch ${owner}/${repo} ${ref}`),
      );
    }
  }
  return stale;
}
