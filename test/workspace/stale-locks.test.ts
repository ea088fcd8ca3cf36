import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../dev/wait-for.ts";
import { commitPending } from "../../src/workflow/step/commit-changes.ts";
import { createWorktree } from "../../src/workspace/create-worktree.ts";
import { git } from "../../src/workspace/git.ts";
import { pushBranch } from "../../src/workspace/push-branch.ts";
import { removeWorktree } from "../../src/workspace/remove-worktree.ts";
import { gitWorksIn } from "../../src/workspace/stale-locks.ts";
import { sweepWorktrees } from "../../src/workspace/sweep-worktrees.ts";
import { syncMirror } from "../../src/workspace/sync-mirror.ts";
import { type WorkspaceOptions, worktreesRoot } from "../../src/workspace/workspace-paths.ts";
import { createRemote, gitIn, tempDir } from "../support/git-fixtures.ts";
import { groupAlive } from "../support/process-alive.ts";

// A container kill takes Lisa's git down with Lisa, holding its locks. Each case here kills a real
// git process group where git holds a lock, then runs what Lisa does next on a restart or a retry.

const TOKEN = `ghs_${"t".repeat(36)}`;
const ref = { owner: "acme", repo: "api" };
const BRANCH = "lisa/1-x";

function setup(): { options: WorkspaceOptions; remote: string } {
  const root = tempDir("remote");
  const remote = createRemote(root, "acme/api", "main", {
    "README.md": "hello\n",
    // Unset, the filter changes nothing; a test sets it to hold git where it holds its locks.
    ".gitattributes": "*.slow filter=slow\n",
    "data.slow": "data\n",
  });
  return {
    options: { dataDir: tempDir("data"), gitBaseUrl: `file://${root}`, author: { name: "Lisa", email: "lisa@example.com" } },
    remote,
  };
}

const started: ChildProcess[] = [];

afterEach(() => {
  for (const child of started.splice(0)) if (child.pid && child.exitCode === null) killGroup(child.pid);
});

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** Starts `git <args>` in a process group of its own, as Lisa runs git. */
function startGit(cwd: string, args: string[], input?: string): ChildProcess {
  const child = spawn("git", args, {
    cwd,
    detached: true,
    stdio: [input === undefined ? "ignore" : "pipe", "ignore", "ignore"],
    env: { ...process.env, GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@e" },
  });
  // The input is written but not ended: `update-ref --stdin` then waits, holding what it prepared.
  if (input !== undefined) child.stdin?.write(input);
  started.push(child);
  return child;
}

/** SIGKILLs the group of `child` and waits until every process of it has died (zombies may stay). */
async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  killGroup(child.pid ?? 0);
  await exited;
  await waitFor("the group to die", () => (groupAlive(child.pid ?? 0) ? undefined : true), 10_000);
}

/** A smudge filter that says when it runs and then hangs: git holds its locks meanwhile. */
function hangingFilter(): { config: string[]; marker: string } {
  const marker = path.join(tempDir("filter"), "smudging");
  return { config: ["-c", `filter.slow.smudge=touch ${marker}; sleep 60; cat`], marker };
}

/** Holds `ref`'s lock in `mirror` the way a git killed mid-update leaves it (a fetch, a commit, a branch deletion). */
async function holdRefLock(mirror: string, refName: string): Promise<ChildProcess> {
  const sha = gitIn(mirror, "rev-parse", "refs/remotes/origin/main").trim();
  const child = startGit(mirror, ["update-ref", "--stdin"], `start\nupdate ${refName} ${sha}\nprepare\n`);
  await waitFor("git to hold the lock", () => existsSync(path.join(mirror, `${refName}.lock`)) || undefined, 10_000);
  return child;
}

describe("locks a killed git left", () => {
  it("a fetch killed holding a remote-tracking branch's lock: the next fetch succeeds", async () => {
    const { options, remote } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    await kill(await holdRefLock(mirror, "refs/remotes/origin/main"));
    expect(existsSync(path.join(mirror, "refs/remotes/origin/main.lock"))).toBe(true);
    gitIn(remote, "branch", "moved", "main");
    const work = tempDir("push");
    gitIn(work, "clone", "--quiet", remote, ".");
    writeFileSync(path.join(work, "new.txt"), "new\n");
    gitIn(work, "add", ".");
    gitIn(work, "commit", "--quiet", "-m", "new");
    gitIn(work, "push", "--quiet", "origin", "HEAD:main");

    await syncMirror(options, ref, TOKEN);
    expect(gitIn(mirror, "rev-parse", "refs/remotes/origin/main")).toBe(gitIn(remote, "rev-parse", "main"));
  });

  it("a `worktree add` killed mid-checkout, its folder swept at start-up: the retry's worktree is made", async () => {
    const { options } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    const { config, marker } = hangingFilter();
    const dir = path.join(worktreesRoot(options), "run-1-step-1");
    const adding = startGit(mirror, [...config, "worktree", "add", "--quiet", "-B", BRANCH, dir, "refs/remotes/origin/main"]);
    await waitFor("the checkout to run", () => existsSync(marker) || undefined, 10_000);
    await kill(adding);
    const admin = path.join(mirror, "worktrees", "run-1-step-1");
    expect(existsSync(path.join(admin, "locked"))).toBe(true);
    expect(existsSync(path.join(admin, "index.lock"))).toBe(true);
    // The step had not recorded its worktree yet: the start-up sweep takes the folder.
    await sweepWorktrees(options, new Set());

    const worktree = await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-1-step-1" });
    expect(readFileSync(path.join(worktree.path, "README.md"), "utf8")).toBe("hello\n");
    expect((await git(worktree.path, ["branch", "--show-current"])).trim()).toBe(BRANCH);
  });

  it("a `git add` killed holding the worktree's index.lock: the resumed step commits and pushes", async () => {
    const { options, remote } = setup();
    await syncMirror(options, ref, TOKEN);
    const first = await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-1-step-1" });
    writeFileSync(path.join(first.path, "work.slow"), "the agent's work\n");
    const marker = path.join(tempDir("filter"), "cleaning");
    const adding = startGit(first.path, ["-c", `filter.slow.clean=touch ${marker}; sleep 60; cat`, "add", "--all"]);
    await waitFor("git add to run its filter", () => existsSync(marker) || undefined, 10_000);
    await kill(adding);
    const gitDir = (await git(first.path, ["rev-parse", "--absolute-git-dir"])).trim();
    expect(existsSync(path.join(gitDir, "index.lock"))).toBe(true);

    await syncMirror(options, ref, TOKEN);
    const again = await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-1-step-1" });
    expect(again.reused).toBe(true);
    expect(await commitPending(again.path, "Add the work")).toBe(true);
    await pushBranch(options, ref, again, TOKEN, { secrets: [TOKEN] });
    expect(gitIn(remote, "show", `${BRANCH}:work.slow`)).toBe("the agent's work\n");
  });

  it("a commit killed holding its branch's lock: the resumed step commits", async () => {
    const { options } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    const first = await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-1-step-1" });
    await kill(await holdRefLock(mirror, `refs/heads/${BRANCH}`));
    writeFileSync(path.join(first.path, "work.txt"), "work\n");

    const again = await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-1-step-1" });
    expect(await commitPending(again.path, "Add the work")).toBe(true);
  });

  it("a lock a living git holds stays, and so does an index.lock in a worktree a living process works in", async () => {
    const { options } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    const worktree = await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-1-step-1" });
    const holder = await holdRefLock(mirror, "refs/remotes/origin/other");
    const gitDir = (await git(worktree.path, ["rev-parse", "--absolute-git-dir"])).trim();
    writeFileSync(path.join(gitDir, "index.lock"), "");
    // A session's process (a gate, an agent) working in the worktree, as Lisa sees it from outside.
    const session = spawn("sleep", ["60"], { cwd: worktree.path, detached: true, stdio: "ignore" });
    started.push(session);
    await waitFor("the session to run", () => (session.pid ? true : undefined));

    await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-1-step-1" });
    expect(existsSync(path.join(mirror, "refs/remotes/origin/other.lock"))).toBe(true);
    expect(existsSync(path.join(gitDir, "index.lock"))).toBe(true);

    await kill(session);
    await kill(holder);
    await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-1-step-1" });
    expect(existsSync(path.join(mirror, "refs/remotes/origin/other.lock"))).toBe(false);
    expect(existsSync(path.join(gitDir, "index.lock"))).toBe(false);
  });

  it("a lock stays while the git holding it names the mirror only by --git-dir or GIT_DIR", async () => {
    const { options } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    const sha = gitIn(mirror, "rev-parse", "refs/remotes/origin/main").trim();
    const input = (name: string) => `start\nupdate refs/remotes/origin/${name} ${sha}\nprepare\n`;
    startGit(tempDir("elsewhere"), [`--git-dir=${mirror}`, "update-ref", "--stdin"], input("by-option"));
    const byEnv = spawn("git", ["update-ref", "--stdin"], {
      cwd: tempDir("elsewhere"),
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
      env: { ...process.env, GIT_DIR: mirror },
    });
    byEnv.stdin?.write(input("by-env"));
    started.push(byEnv);
    const locks = ["by-option", "by-env"].map((name) => path.join(mirror, `refs/remotes/origin/${name}.lock`));
    await waitFor("git to hold the locks", () => locks.every((lock) => existsSync(lock)) || undefined, 10_000);

    await syncMirror(options, ref, TOKEN);
    expect(locks.map((lock) => existsSync(lock))).toEqual([true, true]);
  });
});

describe("gits elsewhere on the host", () => {
  it("a git exiting elsewhere is not taken for one working in the mirror", { timeout: 90_000 }, async () => {
    const { options } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    // Two loops of short gits in another folder: each ends with a moment where /proc shows no working directory.
    // 500 looks take about 3 s alone and 10 s beside three other test files on two cores; more under load.
    for (let loop = 0; loop < 2; loop += 1) {
      const churn = spawn("sh", ["-c", "while :; do git --version >/dev/null; done"], {
        cwd: tempDir("churn"),
        detached: true,
        stdio: "ignore",
      });
      started.push(churn);
    }
    let seen = 0;
    for (let look = 0; look < 500; look += 1) if (await gitWorksIn(mirror)) seen += 1;
    // Taken for one, it skipped the start-up sweep's drop of a branch a killed removal left (scale-worker-frozen-past-lease).
    expect(seen).toBe(0);
  });
});

describe("registrations an agent wrote", () => {
  it("a FIFO as a registration's gitdir does not hold the start-up sweep", { timeout: 20_000 }, async () => {
    const { options } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    const admin = path.join(mirror, "worktrees", "planted");
    mkdirSync(admin, { recursive: true });
    execFileSync("mkfifo", [path.join(admin, "gitdir")]);
    // A CLI's leftover folder: the sweep asks git to remove it, and git reads every registration then.
    mkdirSync(path.join(mirror, ".claude", "worktrees", "leftover"), { recursive: true });
    writeFileSync(path.join(mirror, "packed-refs.lock"), "");
    utimesSync(path.join(mirror, "packed-refs.lock"), new Date(0), new Date(0));

    await sweepWorktrees(options, new Set());
    expect(existsSync(path.join(mirror, "packed-refs.lock"))).toBe(false);
  });
});

describe("worktree removal killed midway", () => {
  it("leaves no local branch for the next run to trip over", async () => {
    const { options } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    const native = path.join(mirror, ".claude", "worktrees", "lisa-1-1-p1-0");
    gitIn(mirror, "worktree", "add", "--quiet", "--lock", "-b", "worktree-lisa-1-1-p1-0", native, "refs/remotes/origin/main");
    // What a removal killed after the folder went and before `branch -D` leaves: the branch alone.
    gitIn(mirror, "worktree", "remove", "--force", "--force", native);
    const kept = await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-2-step-1" });

    await sweepWorktrees(options, new Set([kept.path]));
    expect(gitIn(mirror, "branch", "--list").trim()).toBe(`+ ${BRANCH}`);
    // The CLI's `--worktree` makes its branch with `-b`, which fails on a branch that is there.
    gitIn(mirror, "worktree", "add", "--quiet", "-b", "worktree-lisa-1-1-p1-0", native, "refs/remotes/origin/main");
  });

  it("a `branch -D` killed while it rewrote packed-refs: the start-up sweep still deletes the branch", async () => {
    const { options } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    const worktree = await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-1-step-1" });
    gitIn(mirror, "pack-refs", "--all");
    gitIn(mirror, "worktree", "remove", "--force", worktree.path);
    // A reference-transaction hook holds git where the deletion is prepared: the packed-refs lock and its new copy written.
    const hooks = tempDir("hooks");
    const marker = path.join(tempDir("marker"), "prepared");
    writeFileSync(
      path.join(hooks, "reference-transaction"),
      `#!/bin/sh\n[ "$1" = prepared ] || exit 0\ncat >/dev/null\ntouch ${marker}\nexec sleep 60\n`,
      { mode: 0o755 },
    );
    const deleting = startGit(mirror, ["-c", `core.hooksPath=${hooks}`, "branch", "-D", BRANCH]);
    await waitFor("the deletion to be prepared", () => existsSync(marker) || undefined, 10_000);
    await kill(deleting);
    expect(existsSync(path.join(mirror, "packed-refs.new"))).toBe(true);

    await sweepWorktrees(options, new Set());
    expect(gitIn(mirror, "branch", "--list").trim()).toBe("");
  });

  it("prunes a CLI's locked worktree whose folder a killed removal took, and drops its branch", async () => {
    const { options } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    const native = path.join(mirror, ".claude", "worktrees", "lisa-1-1-p1-0");
    gitIn(mirror, "worktree", "add", "--quiet", "--lock", "-b", "worktree-lisa-1-1-p1-0", native, "refs/remotes/origin/main");
    // Killed after the folder went, before `worktree prune` and `branch -D`.
    rmSync(native, { recursive: true, force: true });

    await sweepWorktrees(options, new Set());
    expect(await git(mirror, ["worktree", "list"])).not.toContain("lisa-1-1-p1-0");
    expect(gitIn(mirror, "branch", "--list").trim()).toBe("");
    gitIn(mirror, "worktree", "add", "--quiet", "-b", "worktree-lisa-1-1-p1-0", native, "refs/remotes/origin/main");
  });

  it("removes the branch of a worktree removed without naming it, and a removal done twice is no error", async () => {
    const { options } = setup();
    const mirror = await syncMirror(options, ref, TOKEN);
    const worktree = await createWorktree(options, ref, { branch: BRANCH, base: "main", dir: "run-1-step-1" });
    await removeWorktree(options, ref, { path: worktree.path });
    await removeWorktree(options, ref, { path: worktree.path });
    expect(gitIn(mirror, "branch", "--list").trim()).toBe("");
    expect(await git(mirror, ["worktree", "list"])).not.toContain("run-1-step-1");
  });
});
