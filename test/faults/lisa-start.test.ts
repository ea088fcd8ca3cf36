import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { startLisaChild } from "../../dev/lisa-process.ts";
import { processesMatching } from "../../dev/processes-matching.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { tempDir } from "../support/git-fixtures.ts";

// The faults suite and the scale-out tests start Lisa in processes of their own; one that never
// listens (a loaded machine, a broken start) fails its test, and must not be left running.
describe("a Lisa process that does not start", () => {
  let github: GitHubEmulator | undefined;
  afterEach(async () => await github?.stop());

  it.each([
    ["never listens", ["-e", "setInterval(() => {}, 1_000)"]],
    ["exits first", ["-e", "process.exit(3)"]],
  ])("%s: the start fails, and no process of it is left", async (_, script) => {
    github = createGitHubEmulator({ reposRoot: tempDir("start-repos"), webhookSecret: "secret" });
    await github.start();
    const marker = `lisa-start-${randomUUID()}`;
    // In place of Lisa, a process that takes the command line it was given and does not listen.
    const start = startLisaChild(github, {
      dataDir: tempDir("start-data"),
      claudeBinary: "/bin/false",
      secret: "secret",
      launcher: [process.execPath, ...script, marker],
      listenTimeoutMs: 2_000,
    });
    await expect(start).rejects.toThrow(/timed out waiting for Lisa to listen|Lisa exited \(3\) before it listened/);
    await waitFor("no process of it", () => processesMatching(marker).length === 0, 10_000);
  });
});
