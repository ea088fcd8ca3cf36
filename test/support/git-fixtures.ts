import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";

export { tempDir } from "../../dev/temp-dir.ts";

import path from "node:path";
import { tempDir } from "../../dev/temp-dir.ts";

export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Test",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "Test",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  });
}

/**
 * A bare repository standing in for `owner/repo` on GitHub, under `<root>/owner/repo.git`, with one
 * commit on `branch` holding `files`. Returns its path.
 */
export function createRemote(root: string, fullName: string, branch: string, files: Record<string, string>): string {
  const bare = path.join(root, `${fullName}.git`);
  mkdirSync(bare, { recursive: true });
  gitIn(bare, "init", "--bare", "--quiet", `--initial-branch=${branch}`);
  const work = tempDir("seed");
  gitIn(work, "init", "--quiet", `--initial-branch=${branch}`);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
    writeFileSync(path.join(work, file), content);
  }
  gitIn(work, "add", "--all");
  gitIn(work, "commit", "--quiet", "-m", "initial commit");
  gitIn(work, "push", "--quiet", bare, `HEAD:refs/heads/${branch}`);
  return bare;
}
