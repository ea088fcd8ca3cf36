import { existsSync, lstatSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { branchName } from "../../src/workspace/branch-name.ts";
import { createWorktree } from "../../src/workspace/create-worktree.ts";
import { git } from "../../src/workspace/git.ts";
import { pushBranch } from "../../src/workspace/push-branch.ts";
import { removeWorktree } from "../../src/workspace/remove-worktree.ts";
import { withRepoLock } from "../../src/workspace/repo-lock.ts";
import { sweepWorktrees } from "../../src/workspace/sweep-worktrees.ts";
import { syncMirror } from "../../src/workspace/sync-mirror.ts";
import { mirrorPath, type WorkspaceOptions } from "../../src/workspace/workspace-paths.ts";
import { createRemote, gitIn, tempDir } from "../support/git-fixtures.ts";

const TOKEN = `ghs_${"t".repeat(36)}`;
const ref = { owner: "acme", repo: "api" };

function setup(): { options: WorkspaceOptions; remote: string } {
  const root = tempDir("remote");
  const remote = createRemote(root, "acme/api", "main", { "README.md": "hello\n" });
  return {
    options: { dataDir: tempDir("data"), gitBaseUrl: `file://${root}`, author: { name: "Lisa", email: "lisa@example.com" } },
    remote,
  };
}

describe("branchName", () => {
  it.each([
    [12, "Fix the login page!", "lisa/12-fix-the-login-page"],
    [3, "  Ünïcode & symbols: café  ", "lisa/3-unicode-symbols-cafe"],
    [7, "!!!", "lisa/7"],
    [8, "a".repeat(80), `lisa/8-${"a".repeat(40)}`],
    [9, "Add a health check and show it on the page", "lisa/9-add-a-health-check-and-show-it-on-the"],
  ])("names issue %d %j as %s", (issue, title, expected) => {
    expect(branchName(issue, title)).toBe(expected);
  });

  it("names the issue's repository in another repository, so two issues #1 never share a branch there", () => {
    const web = { owner: "acme", repo: "web" };
    expect(branchName(1, "Add health", { owner: "acme", repo: "web" }, web)).toBe("lisa/1-add-health");
    expect(branchName(1, "Add health", { owner: "Acme", repo: "API" }, web)).toBe("lisa/api-1-add-health");
    expect(branchName(1, "Add health", { owner: "globex", repo: "my.api" }, web)).toBe("lisa/globex-my-api-1-add-health");
  });
});

describe("syncMirror and createWorktree", () => {
  it("creates a worktree on a new branch from the base, and never writes the token to disk", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    const worktree = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });

    expect(readFileSync(path.join(worktree.path, "README.md"), "utf8")).toBe("hello\n");
    expect((await git(worktree.path, ["branch", "--show-current"])).trim()).toBe("lisa/1-x");
    expect(worktree.reused).toBe(false);
    const config = readFileSync(path.join(mirrorPath(options, ref), "config"), "utf8");
    expect(config).not.toContain(TOKEN);
    expect(config).not.toContain("extraHeader");
  });

  it("picks up the existing worktree of an interrupted session with its uncommitted work", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    const first = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });
    writeFileSync(path.join(first.path, "work.txt"), "half done");
    const again = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });
    expect(again).toMatchObject({ path: first.path, reused: true });
    expect(readFileSync(path.join(again.path, "work.txt"), "utf8")).toBe("half done");
  });

  it("makes again a worktree whose checkout was cut off, instead of committing its missing files away", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    const first = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });
    // What a `worktree add` killed mid-checkout leaves: the `.git` file, part of the files, no index.
    const gitDir = (await git(first.path, ["rev-parse", "--absolute-git-dir"])).trim();
    rmSync(path.join(gitDir, "index"));
    rmSync(path.join(first.path, "README.md"));
    const again = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });
    expect(again).toMatchObject({ path: first.path, reused: false });
    expect(readFileSync(path.join(again.path, "README.md"), "utf8")).toBe("hello\n");
    expect((await git(again.path, ["status", "--porcelain"])).trim()).toBe("");
  });

  it("makes again, on its path and branch, a worktree whose folder was deleted without git", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    const first = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });
    // Still registered in the mirror, and still holding its branch: what a cleaned disk leaves.
    rmSync(first.path, { recursive: true, force: true });
    const again = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });
    expect(again).toMatchObject({ path: first.path, branch: "lisa/1-x", reused: false });
    expect(readFileSync(path.join(again.path, "README.md"), "utf8")).toBe("hello\n");
    // The branch it held can be checked out elsewhere once that worktree is gone for good.
    rmSync(again.path, { recursive: true, force: true });
    const moved = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-2" });
    expect((await git(moved.path, ["branch", "--show-current"])).trim()).toBe("lisa/1-x");
  });

  it("starts from the branch's remote head when the branch was pushed before", async () => {
    const { options, remote } = setup();
    await syncMirror(options, ref, TOKEN);
    const first = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });
    writeFileSync(path.join(first.path, "feature.txt"), "v1");
    await git(first.path, ["add", "."]);
    await git(first.path, ["commit", "-qm", "v1"]);
    await pushBranch(options, ref, first, TOKEN, { secrets: [TOKEN] });
    await removeWorktree(options, ref, first);

    await syncMirror(options, ref, TOKEN);
    const second = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-2" });
    expect(readFileSync(path.join(second.path, "feature.txt"), "utf8")).toBe("v1");
    expect(second.startSha).toBe(gitIn(remote, "rev-parse", "lisa/1-x").trim());
  });

  it("adds many worktrees of one repository at once without tripping over git's locks", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    const worktrees = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createWorktree(options, ref, { branch: `lisa/${i}-x`, base: "main", dir: `run-${i}` })),
    );
    expect(new Set(worktrees.map((w) => w.path)).size).toBe(8);
    expect(worktrees.every((w) => existsSync(path.join(w.path, "README.md")))).toBe(true);
  });

  it("rewrites the mirror's config so that git reading it meanwhile (a CLI's own worktree) never sees it half written", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    const mirror = mirrorPath(options, ref);
    // What `claude --worktree` does in the mirror while another session of the repository starts.
    const reader = async () => {
      const failures: string[] = [];
      for (let i = 0; i < 150; i++) {
        await git(mirror, ["remote", "get-url", "origin"]).catch((error: Error) => failures.push(error.message));
      }
      return failures;
    };
    const writer = async () => {
      for (let i = 0; i < 150; i++) await syncMirror(options, ref, TOKEN);
      return [];
    };
    const failures = (await Promise.all([reader(), reader(), writer()])).flat();
    expect(failures).toEqual([]);
  });

  it("writes its own config and exclude file in place of links an agent planted, not where they point", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    const mirror = mirrorPath(options, ref);
    const elsewhere = tempDir("elsewhere");
    writeFileSync(path.join(elsewhere, "target"), "keep\n");
    rmSync(path.join(mirror, "config"));
    symlinkSync(path.join(elsewhere, "target"), path.join(mirror, "config"));
    rmSync(path.join(mirror, "info"), { recursive: true });
    symlinkSync(elsewhere, path.join(mirror, "info"));

    await syncMirror(options, ref, TOKEN);
    expect(readFileSync(path.join(elsewhere, "target"), "utf8")).toBe("keep\n");
    expect(existsSync(path.join(elsewhere, "exclude"))).toBe(false);
    expect(lstatSync(path.join(mirror, "config")).isFile()).toBe(true);
    expect(lstatSync(path.join(mirror, "info")).isDirectory()).toBe(true);
  });

  it("fails clearly when the base branch does not exist", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    await expect(createWorktree(options, ref, { branch: "lisa/1-x", base: "nope", dir: "run-1" })).rejects.toThrow(
      "Base branch `nope` does not exist in acme/api",
    );
  });
});

describe("pushBranch", () => {
  it("ignores remote and URL rewrites an agent wrote into the shared config", async () => {
    const { options, remote } = setup();
    await syncMirror(options, ref, TOKEN);
    const worktree = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });
    const decoy = tempDir("decoy");
    gitIn(decoy, "init", "--bare", "--quiet");
    // What a hostile agent could do from inside its worktree.
    await git(worktree.path, ["config", "remote.origin.pushurl", decoy]);
    await git(worktree.path, ["config", `url.${decoy}.insteadOf`, options.gitBaseUrl]);
    writeFileSync(path.join(worktree.path, "change.txt"), "x");
    await git(worktree.path, ["add", "."]);
    await git(worktree.path, ["commit", "-qm", "change"]);

    await pushBranch(options, ref, worktree, TOKEN, { secrets: [TOKEN] });

    expect(gitIn(remote, "branch", "--list", "lisa/1-x").trim()).toBe("lisa/1-x");
    expect(gitIn(decoy, "branch", "--list").trim()).toBe("");
  });

  it("redacts the token from a failing git command's error", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    const worktree = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });
    const error = await git(worktree.path, ["push", `https://${TOKEN}@127.0.0.1:1/x.git`, "HEAD"], { token: TOKEN }).catch(
      (e: Error) => e,
    );
    expect(String(error)).toMatch(/git push failed/);
    expect(String(error)).not.toContain(TOKEN);
  });
});

describe("sweepWorktrees", () => {
  it("removes worktrees nobody owns and keeps the others", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    const keep = await createWorktree(options, ref, { branch: "lisa/1-x", base: "main", dir: "run-1" });
    const stale = await createWorktree(options, ref, { branch: "lisa/2-x", base: "main", dir: "run-2" });

    expect(await sweepWorktrees(options, new Set([keep.path]))).toEqual([stale.path]);
    expect(existsSync(keep.path)).toBe(true);
    expect(existsSync(stale.path)).toBe(false);
    expect(await git(mirrorPath(options, ref), ["worktree", "list"])).not.toContain("run-2");
  });
});

describe("sweepWorktrees with CLI-made worktrees", () => {
  it("removes a locked worktree a CLI left inside the mirror, and its git record", async () => {
    const { options } = setup();
    await syncMirror(options, ref, TOKEN);
    const mirror = mirrorPath(options, ref);
    const orphan = path.join(mirror, ".claude", "worktrees", "lisa-9-1");
    await git(mirror, ["worktree", "add", "--quiet", "--lock", "-b", "worktree-lisa-9-1", orphan, "refs/remotes/origin/main"]);

    expect(await sweepWorktrees(options, new Set())).toEqual([orphan]);
    expect(existsSync(orphan)).toBe(false);
    expect(await git(mirror, ["worktree", "list"])).not.toContain("lisa-9-1");
  });
});

describe("withRepoLock", () => {
  it("runs tasks for one key one at a time, and keeps going after a failure", async () => {
    const order: string[] = [];
    const task =
      (name: string, ms: number, fail = false) =>
      async () => {
        order.push(`${name}:start`);
        await new Promise((resolve) => setTimeout(resolve, ms));
        order.push(`${name}:end`);
        if (fail) throw new Error(name);
      };
    const results = await Promise.allSettled([withRepoLock("k", task("a", 30, true)), withRepoLock("k", task("b", 1))]);
    expect(order).toEqual(["a:start", "a:end", "b:start", "b:end"]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
  });
});
