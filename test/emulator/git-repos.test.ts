import { execFileSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitEnv } from "../../emulator/git-repos.ts";
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
