import type { ChildProcess } from "node:child_process";
import { afterEach } from "vitest";
import { assertAllRouted } from "../../dev/emulated-lisa.ts";
import { startLisaChild } from "../../dev/lisa-process.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { tempDir } from "./git-fixtures.ts";

/**
 * Per test: a GitHub emulator, and Lisa in processes of their own against it (dev/lisa-process.ts),
 * so a test can kill or stop one mid-run and start another on the same data. All are killed and
 * the emulator stopped after the test, which fails if Lisa asked the emulator for a route it lacks.
 */
export function useLisaChildren(secret: string) {
  const children: ChildProcess[] = [];
  let github: GitHubEmulator | undefined;
  const killAll = () => {
    for (const child of children.splice(0)) child.kill("SIGKILL");
  };
  afterEach(async () => {
    killAll();
    const stopped = github;
    github = undefined;
    await stopped?.stop();
    // As the emulated Lisa's stop does: a request no route of the emulator answers fails the test.
    if (stopped) assertAllRouted(stopped);
  });
  return {
    async emulator(): Promise<GitHubEmulator> {
      github = createGitHubEmulator({ reposRoot: tempDir("child-repos"), webhookSecret: secret });
      await github.start();
      return github;
    },
    /** Starts a Lisa on `dataDir` and points the emulator's webhooks at it. */
    async start(options: {
      dataDir: string;
      claudeBinary: string;
      shutdownGraceMs?: number;
      logFile?: string;
    }): Promise<ChildProcess> {
      if (!github) throw new Error("start the emulator first");
      const child = await startLisaChild(github, { ...options, secret });
      children.push(child);
      return child;
    },
    killAll,
  };
}
