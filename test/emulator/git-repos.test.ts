import { execFileSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { branchSha, createBareRepository, gitEnv, readPath } from "../../emulator/git-repos.ts";
import { tempDir } from "../support/git-fixtures.ts";

/**
 * A commit of 2,000 files in a repository whose own config asks for a gc above one loose object: the
 * same trigger as the 10,000 files of the bench's seed against `gc.auto`'s default of 6,700, for less.
 */
function commitMany(env: NodeJS.ProcessEnv): string {
  const work = tempDir("many-files");
  const git = (...args: string[]) => execFileSync("git", args, { cwd: work, env, stdio: "pipe" });
  git("init", "--quiet", "--initial-branch=main");
  git("config", "gc.auto", "1");
  // In the foreground, so that the control below sees it finished.
  git("config", "gc.autoDetach", "false");
  for (let i = 0; i < 2_000; i++) writeFileSync(path.join(work, `f${i}.txt`), `${i}\n`);
  git("add", "--all");
  git("-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "--quiet", "-m", "Many files");
  return work;
}

describe("the emulator's throw-away clones", () => {
  it("start no automatic gc, which would go on writing into a clone while it is removed", () => {
    // The control: plain git does gc after such a commit; `git gc --auto` packs the refs first.
    const plain = commitMany({ PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" });
    expect(existsSync(path.join(plain, ".git", "packed-refs"))).toBe(true);

    const work = commitMany(gitEnv());
    expect(existsSync(path.join(work, ".git", "packed-refs"))).toBe(false);
    expect(existsSync(path.join(work, ".git", "gc.pid"))).toBe(false);
    // Removed at once, as the emulator removes its seed clones: no ENOTEMPTY.
    rmSync(work, { recursive: true });
    expect(existsSync(work)).toBe(false);
  });
});

describe("branchSha", () => {
  it("reads a branch as git does: its loose ref, a packed ref, a name git must resolve, and none", async () => {
    const gitDir = path.join(tempDir("branch-sha"), "repo.git");
    await createBareRepository(gitDir, "main", { "README.md": "# R\n" });
    const git = (...args: string[]) => execFileSync("git", args, { cwd: gitDir, env: gitEnv(), encoding: "utf8" }).trim();
    const main = git("rev-parse", "refs/heads/main");
    git("branch", "feature/one", "main");
    git("branch", "odd+name", "main");

    expect(await branchSha(gitDir, "main")).toBe(main);
    expect(await branchSha(gitDir, "feature/one")).toBe(main);
    expect(await branchSha(gitDir, "odd+name")).toBe(main);
    expect(await branchSha(gitDir, "gone")).toBeUndefined();
    expect(await branchSha(gitDir, "../HEAD")).toBeUndefined();

    // Packed (as gc packs them), the loose files are gone and `packed-refs` holds them.
    git("pack-refs", "--all");
    expect(existsSync(path.join(gitDir, "refs", "heads", "main"))).toBe(false);
    expect(await branchSha(gitDir, "main")).toBe(main);
    expect(await branchSha(gitDir, "feature/one")).toBe(main);
    expect(await branchSha(gitDir, "one")).toBeUndefined();
  });
});

describe("readPath", () => {
  it("reads what a commit holds at a path from git once, and a branch's new head as soon as it is pushed", async () => {
    const gitDir = path.join(tempDir("read-path"), "repo.git");
    await createBareRepository(gitDir, "main", { "a.txt": "one\n" });
    const text = async (ref: string, file = "a.txt") => {
      const found = await readPath(gitDir, ref, file);
      return found?.type === "file" ? found.content.toString("utf8") : found?.type;
    };
    expect(await text("main")).toBe("one\n");

    // A push that does not go through the emulator, as a test's own git would make.
    const work = tempDir("read-path-clone");
    const git = (...args: string[]) => execFileSync("git", args, { cwd: work, env: gitEnv(), stdio: "pipe" });
    git("clone", "--quiet", gitDir, ".");
    writeFileSync(path.join(work, "a.txt"), "two\n");
    git("commit", "--quiet", "-am", "Two");
    git("push", "--quiet", "origin", "main");
    expect(await text("main")).toBe("two\n");
    const head = git("rev-parse", "HEAD").toString().trim();
    const seeded = path.join(tempDir("read-path"), "seeded.git");
    await createBareRepository(seeded, "trunk", { "docs/b.md": "# b\n" });
    const blobSha = execFileSync("git", ["rev-parse", "trunk:docs/b.md"], { cwd: seeded, env: gitEnv() }).toString().trim();

    // Without git on PATH, what was read is still there; what was not cannot be read.
    const pathBefore = process.env.PATH;
    process.env.PATH = tempDir("no-git");
    try {
      expect(await text("main")).toBe("two\n");
      expect(await text(head)).toBe("two\n");
      expect(await text("main", "b.txt")).toBeUndefined();
      // A seeded repository's files are known from its creation, as git itself lists them.
      const found = await readPath(seeded, "trunk", "docs/b.md");
      expect(found?.type === "file" && found.content.toString("utf8")).toBe("# b\n");
      expect(found?.type === "file" && found.entry).toEqual({
        type: "file",
        name: "b.md",
        path: "docs/b.md",
        sha: blobSha,
        size: 4,
      });
    } finally {
      process.env.PATH = pathBefore;
    }

    // A branch whose ref is packed is resolved by git.
    execFileSync("git", ["pack-refs", "--all"], { cwd: gitDir, env: gitEnv() });
    expect(existsSync(path.join(gitDir, "refs", "heads", "main"))).toBe(false);
    expect(await text("main")).toBe("two\n");
    expect(await text("no-such-branch")).toBeUndefined();
    expect(await text("main", "")).toBe("dir");
  });
});
