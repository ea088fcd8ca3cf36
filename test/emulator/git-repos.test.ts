import { execFileSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitEnv } from "../../emulator/git-repos.ts";
import { tempDir } from "../support/git-fixtures.ts";

/** More loose objects than `gc.auto`'s default (6,700), which `git commit` would follow with an automatic gc. */
const MANY = 10_000;
const manyFiles = () => Object.fromEntries(Array.from({ length: MANY }, (_, i) => [`f${i}.txt`, `${i}\n`]));

describe("the emulator's throw-away clones", () => {
  it("start no automatic gc, which would go on writing into a clone while it is removed", () => {
    const work = tempDir("many-files");
    const git = (...args: string[]) => execFileSync("git", args, { cwd: work, env: gitEnv(), stdio: "pipe" });
    git("init", "--quiet", "--initial-branch=main");
    for (const [file, content] of Object.entries(manyFiles())) writeFileSync(path.join(work, file), content);
    git("add", "--all");
    git("commit", "--quiet", "-m", "Many files");

    // `git gc --auto` packs the refs before it goes to the background: packed-refs is its trace.
    expect(existsSync(path.join(work, ".git", "packed-refs"))).toBe(false);
    expect(existsSync(path.join(work, ".git", "gc.pid"))).toBe(false);
    // Removed at once, as the emulator removes its seed clones: no ENOTEMPTY.
    rmSync(work, { recursive: true });
    expect(existsSync(work)).toBe(false);
  });
});
