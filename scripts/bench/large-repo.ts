import { execFile } from "node:child_process";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** Files in the large repository of the set-up figures (BENCH_FILES). */
export const LARGE_REPO_FILES = Number(process.env.BENCH_FILES ?? 10_000);

/**
 * A repository the size issue 11 names, about 10,000 files of source-like text in 100 folders
 * (some 20 MB checked out): big enough that checking it out dominates a session's set-up.
 */
export function largeRepoFiles(count = LARGE_REPO_FILES): Record<string, string> {
  const files: Record<string, string> = { "README.md": "# Large\n" };
  for (let i = 0; i < count - 1; i++) {
    const lines = Array.from({ length: 40 }, (_, j) => `export const value_${i}_${j} = ${(i * 7919 + j * 104729) % 1_000_003};`);
    files[`packages/pkg-${i % 100}/src/module-${i}.ts`] = `${lines.join("\n")}\n`;
  }
  return files;
}

/** Plain git, authenticated as git over HTTP to GitHub is, with none of Lisa's wrapping. */
export async function rawGit(cwd: string, args: string[], token?: string): Promise<string> {
  const auth = token
    ? ["-c", `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`]
    : [];
  const { stdout } = await execFileAsync("git", [...auth, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_TERMINAL_PROMPT: "0",
      GIT_AUTHOR_NAME: "Bench",
      GIT_AUTHOR_EMAIL: "bench@example.invalid",
      GIT_COMMITTER_NAME: "Bench",
      GIT_COMMITTER_EMAIL: "bench@example.invalid",
    },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** Disk use of a folder in KiB, as `du` counts it (blocks, hard links once). */
export async function diskKiB(...paths: string[]): Promise<number> {
  const { stdout } = await execFileAsync("du", ["-skc", ...paths]);
  return Number(stdout.trim().split("\n").at(-1)?.split("\t")[0]);
}
