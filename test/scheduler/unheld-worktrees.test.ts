import { existsSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import { sweepUnheldWorktrees } from "../../src/scheduler/unheld-worktrees.ts";
import { Store } from "../../src/store/store.ts";
import { createWorktree } from "../../src/workspace/create-worktree.ts";
import { git } from "../../src/workspace/git.ts";
import { syncMirror } from "../../src/workspace/sync-mirror.ts";
import { mirrorPath, type WorkspaceOptions } from "../../src/workspace/workspace-paths.ts";
import { createRemote, tempDir } from "../support/git-fixtures.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";

const TOKEN = `ghs_${"t".repeat(36)}`;
const ref = { owner: "acme", repo: "api" };
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** A store of runs 1 to 4 on issues 1 to 4, each claimed by the worker named for it. */
async function runsClaimedBy(workers: string[]): Promise<Store> {
  const store = new Store(testDatabaseUrl(tempDir("store")) ?? ":memory:");
  for (const [index, worker] of workers.entries()) {
    const issue = index + 1;
    const run = await store.runs.create(newRun(issue), oneStep(issue));
    await store.runs.claim(worker, run?.id);
  }
  return store;
}

/** A data directory with the mirror of acme/api synced from a remote of one commit on main. */
async function mirrored(): Promise<{ workspace: WorkspaceOptions; mirror: string }> {
  const root = tempDir("remote");
  createRemote(root, "acme/api", "main", { "README.md": "hello\n" });
  const workspace = {
    dataDir: tempDir("data"),
    gitBaseUrl: `file://${root}`,
    author: { name: "Lisa", email: "lisa@example.com" },
  };
  await syncMirror(workspace, ref, TOKEN);
  return { workspace, mirror: mirrorPath(workspace, ref) };
}

describe("sweepUnheldWorktrees", () => {
  it("removes the worktrees and branches of runs another worker claimed, never those of runs under way here or its own", async () => {
    const { workspace, mirror } = await mirrored();
    // Run 1 went to w2 (its folder and the CLI's own), run 2 too but it is under way here again, run 3 is w1's, run 4 failed on w2.
    const store = await runsClaimedBy(["w2", "w2", "w1", "w2"]);
    await store.runs.transition(4, "fail");
    const folders = [];
    for (const run of [1, 2, 3, 4]) {
      const worktree = await createWorktree(workspace, ref, {
        branch: `lisa/${run}-title`,
        base: "main",
        dir: `run-${run}-step-1`,
      });
      folders.push(worktree.path);
    }
    const native = path.join(mirror, ".claude", "worktrees", "lisa-1-1-p1-0");
    await git(mirror, [
      "worktree",
      "add",
      "--quiet",
      "--lock",
      "-b",
      "worktree-lisa-1-1-p1-0",
      native,
      "refs/remotes/origin/main",
    ]);
    // A folder whose name says no run is nobody's to judge.
    const stranger = path.join(workspace.dataDir, "worktrees", "scratch");
    mkdirSync(stranger);

    const removed = await sweepUnheldWorktrees({ store, workspace, workerName: "w1", log: quiet }, (run) => run === 2);

    expect(removed.sort()).toEqual([folders[0], folders[3], native].sort());
    for (const kept of [folders[1], folders[2], stranger]) expect(existsSync(kept as string)).toBe(true);
    expect(await git(mirror, ["for-each-ref", "--format=%(refname:short)", "refs/heads/"])).toBe("lisa/2-title\nlisa/3-title");
    // Nothing more to remove: a second sweep finds nothing.
    expect(await sweepUnheldWorktrees({ store, workspace, workerName: "w1", log: quiet }, (run) => run === 2)).toEqual([]);
  });

  it("removes the worktrees of its own runs that came to rest while not running here, and keeps those a retry or fix resumes", async () => {
    const { workspace } = await mirrored();
    // All three are w1's: run 1 was aborted after a restart, run 2 failed, run 3 waits to be resumed here.
    const store = await runsClaimedBy(["w1", "w1", "w1"]);
    await store.runs.transition(1, "abort");
    await store.runs.transition(2, "fail");
    const folders = [];
    for (const run of [1, 2, 3]) {
      folders.push(
        (await createWorktree(workspace, ref, { branch: `lisa/${run}-title`, base: "main", dir: `run-${run}-step-1` })).path,
      );
    }

    const removed = await sweepUnheldWorktrees({ store, workspace, workerName: "w1", log: quiet }, () => false);

    expect(removed).toEqual([folders[0]]);
    for (const kept of [folders[1], folders[2]]) expect(existsSync(kept as string)).toBe(true);
  });

  it("drops the branch a removal cut short left on this disk, though its folder is gone already", async () => {
    const { workspace, mirror } = await mirrored();
    // Run 1 was taken over by w2 after this worker froze; run 2 is under way here.
    const store = await runsClaimedBy(["w2", "w1"]);
    const taken = await createWorktree(workspace, ref, { branch: "lisa/1-title", base: "main", dir: "run-1-step-1" });
    await createWorktree(workspace, ref, { branch: "lisa/2-title", base: "main", dir: "run-2-step-1" });
    // The removal of run 1's worktree was killed after its folder went and before its branch did.
    rmSync(taken.path, { recursive: true, force: true });
    await git(mirror, ["worktree", "prune"]);

    expect(await sweepUnheldWorktrees({ store, workspace, workerName: "w1", log: quiet }, (run) => run === 2)).toEqual([]);

    expect(await git(mirror, ["for-each-ref", "--format=%(refname:short)", "refs/heads/"])).toBe("lisa/2-title");
  });
});
