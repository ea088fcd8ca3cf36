import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { testStoreLocation } from "../../dev/test-database.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { Store } from "../../src/store/store.ts";
import { gitIn, tempDir } from "../support/git-fixtures.ts";
import { useLisaChildren } from "../support/lisa-child.ts";
import { groupAlive, isAlive } from "../support/process-alive.ts";

// A container kill takes Lisa and the git it runs down together, and git leaves its locks: in the
// mirror (a fetch's remote-tracking branch) and in the step's worktree (`git add`'s index.lock).
// The Lisa started after it resumes the run and delivers it.

const SECRET = "stale-locks-test-secret-of-at-least-32-bytes";
const REPO = "acme/api";

const lisa = useLisaChildren(SECRET);

/** Runs `git <args>` in a group of its own until `marker` says it holds its locks, then SIGKILLs the group. */
async function killGitMidway(cwd: string, args: string[], marker: string, input?: string): Promise<void> {
  const child: ChildProcess = spawn("git", args, {
    cwd,
    detached: true,
    stdio: [input === undefined ? "ignore" : "pipe", "ignore", "ignore"],
  });
  if (input !== undefined) child.stdin?.write(input);
  await waitFor("git to hold its lock", () => existsSync(marker) || undefined, 10_000);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  process.kill(-(child.pid ?? 0), "SIGKILL");
  await exited;
  await waitFor("git's group to die", () => (groupAlive(child.pid ?? 0) ? undefined : true), 10_000);
}

describe("a run killed while git held its locks", () => {
  it("resumes after the restart and opens its pull request", async () => {
    const agent = createFakeClaude([
      { write: { "health.ts": "export const he" }, hang: true },
      { write: { "health.ts": "export const health = () => 'ok';\n" }, manifest: { title: "Add health", what: "Adds it." } },
    ]);
    const emulator = await lisa.emulator();
    await emulator.createRepo(REPO, { files: { "README.md": "# API\n" }, config: "label: lisa\n" });
    emulator.addCollaborator(REPO, "ann", "write");
    const dataDir = path.join(tempDir("locks-data"), "lisa");
    const options = { dataDir, claudeBinary: agent.binary };
    const first = await lisa.start(options);
    const issue = await emulator.createIssue(REPO, { title: "Add a health endpoint", body: "", user: "ann" });
    await emulator.labelIssue(REPO, issue.number, "lisa", "ann");
    const pids = await waitFor("the agent to start", () => agent.hangingPids(), 60_000);
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    await waitFor("the agent to die with Lisa", () => (pids.some(isAlive) ? undefined : true), 10_000);

    const store = new Store(testStoreLocation(dataDir));
    const worktree = (await store.steps.of((await store.runs.inState("running"))[0]?.id ?? 0))[0]?.worktree ?? "";
    await store.close();
    const mirror = path.join(dataDir, "mirrors", "acme", "api.git");
    // Someone pushed meanwhile, so the resumed run's fetch moves `main`: the ref a killed fetch left locked.
    await emulator.pushCommit(REPO, "main", { files: { "NOTES.md": "notes\n" }, message: "Notes", user: "ann" });
    const sha = gitIn(mirror, "rev-parse", "refs/remotes/origin/main").trim();
    await killGitMidway(
      mirror,
      ["update-ref", "--stdin"],
      path.join(mirror, "refs/remotes/origin/main.lock"),
      `start\nupdate refs/remotes/origin/main ${sha}\nprepare\n`,
    );
    // `git add` of the agent's work, killed while it held the worktree's index.
    const attributes = path.join(tempDir("attributes"), "attributes");
    writeFileSync(attributes, "*.ts filter=slow\n");
    const adding = path.join(tempDir("marker"), "adding");
    await killGitMidway(
      worktree,
      ["-c", `core.attributesFile=${attributes}`, "-c", `filter.slow.clean=touch ${adding}; sleep 60; cat`, "add", "--all"],
      adding,
    );
    const gitDir = gitIn(worktree, "rev-parse", "--absolute-git-dir").trim();
    expect(existsSync(path.join(gitDir, "index.lock"))).toBe(true);

    await lisa.start(options);
    await waitFor(
      "the resumed run's pull request",
      async () => {
        const check = new Store(testStoreLocation(dataDir));
        const failed = (await check.runs.inState("failed"))[0];
        const error = failed ? (await check.runs.get(failed.id))?.error : undefined;
        await check.close();
        if (error) throw new Error(`the run failed: ${error}`);
        return emulator.pulls(REPO).length > 0 || undefined;
      },
      90_000,
    );
    expect(emulator.pulls(REPO)).toHaveLength(1);
    expect(gitIn(emulator.gitDir(REPO), "show", `${emulator.pulls(REPO)[0]?.head.ref}:health.ts`)).toContain("health");
  });
});
