import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import type { FakeComment, Route } from "../support/fake-github.ts";
import { gitIn, tempDir } from "../support/git-fixtures.ts";
import { DELIVERY_ROUTES, fakeHelloWorld, useIntegrationContext } from "../support/integration.ts";
import { BRANCH, createHarness, OWNER, REPO } from "../support/lisa-harness.ts";
import { isAlive } from "../support/process-alive.ts";

const LISA_PROCESS = fileURLToPath(new URL("../support/lisa-process.ts", import.meta.url));
const ROUTES: Route[] = [...DELIVERY_ROUTES];
const CONFIG = "label: bug\ngates:\n  - grep -q 'Hello World' README.md\n";
/** What a restarted Lisa asks of GitHub to finish a run whose tracking comment is already there. */
const RESUMED_ROUTES: Route[] = [
  "token",
  "permission",
  "comments",
  "comment-update",
  "label-read",
  "label-add",
  "label-set",
  "pulls",
  "pull-read",
  "reviews",
  "reviewers",
  "checks",
];

const context = useIntegrationContext();

describe("a run interrupted by Lisa stopping", () => {
  it("resumes on restart in the same worktree, without a second pull request or tracking comment", async () => {
    // First session hangs as if the agent were mid-work; the one after the restart finishes the job.
    const agent = createFakeClaude([
      { write: { "README.md": "# Hello Wo" }, hang: true },
      { write: { "README.md": "# Hello World\n" } },
    ]);
    const dataDir = path.join(tempDir("data"), "lisa");
    const stateFile = path.join(tempDir("state"), "github.json");
    const child = spawn(
      process.execPath,
      [
        LISA_PROCESS,
        JSON.stringify({
          remoteRoot: context.remoteRoot,
          dataDir,
          claudeBinary: agent.binary,
          config: CONFIG,
          stateFile,
          routes: ROUTES,
        }),
      ],
      { stdio: "ignore" },
    );

    const pids = await waitFor("the agent to start", () => agent.hangingPids());
    const before = await waitFor("the tracking comment", () => {
      if (!existsSync(stateFile)) return undefined;
      const state = JSON.parse(readFileSync(stateFile, "utf8")) as { comments: FakeComment[] };
      return state.comments.some((c) => c.body.includes("the agent is working")) ? state : undefined;
    });
    expect(pids).toHaveLength(2);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    // The agent's sandbox dies with Lisa (bubblewrap's --die-with-parent), and every process in it.
    await waitFor("the agent to die with Lisa", () => (pids.some(isAlive) ? undefined : true), 5_000);

    const github = fakeHelloWorld({
      config: CONFIG,
      routes: RESUMED_ROUTES,
      comments: before.comments,
    });
    const harness = context.use(createHarness({ remoteRoot: context.remoteRoot, claudeBinary: agent.binary, dataDir }));
    await harness.lisa.start();
    await harness.lisa.idle();

    const [run] = harness.lisa.store.runsIn("review");
    expect(run?.restarts).toBe(1);
    const sessions = harness.lisa.store.sessions(harness.lisa.store.steps(run?.id ?? 0)[0]?.id ?? 0);
    expect(sessions.map((s) => [s.iteration, s.purpose, s.state])).toEqual([
      [1, "implement", "interrupted"],
      [2, "resume", "succeeded"],
    ]);
    const calls = agent.calls();
    expect(calls).toHaveLength(2);
    expect(calls[1]?.cwd).toBe(calls[0]?.cwd);
    expect(calls[1]?.prompt).toContain("An earlier session on this task was interrupted");

    expect(github.state.pulls).toHaveLength(1);
    expect(github.state.pulls[0]?.head).toBe(BRANCH);
    // After the restart the only new comment is the pull request's review package; the tracking comment was found again.
    expect(github.state.requests.filter((r) => r.startsWith("POST") && r.includes("/comments"))).toEqual([
      `POST /repos/${OWNER}/${REPO}/issues/10/comments`,
    ]);
    expect(github.state.comments.filter((c) => c.body.includes("<!-- lisa:pass run=1 pass=1 "))).toHaveLength(1);
    const tracking = github.state.comments.filter((c) => c.body.includes("lisa:tracking"));
    expect(tracking).toHaveLength(1);
    expect(tracking[0]?.body).toContain("Ready for review");
    expect(tracking[0]?.body).toMatch(/Agent session 1: claude, implementing · \d+s · \$0\.00 · interrupted/);
    expect(gitIn(path.join(context.remoteRoot, `${OWNER}/${REPO}.git`), "show", `${BRANCH}:README.md`)).toBe("# Hello World\n");
    expect(github.scope.pendingMocks()).toEqual([]);
  });

  it("ends an unsandboxed gate a killed Lisa left running before the run resumes, then delivers", async () => {
    // Unsandboxed, nothing kills a gate's process group with Lisa: the first gate run sleeps on
    // after the kill; the one after the restart checks the README and passes.
    const marks = tempDir("gate-marks");
    const [started, pidFile] = [path.join(marks, "started"), path.join(marks, "gate.pid")];
    const config = `label: bug\ngates:\n  - "if [ ! -e ${started} ]; then : > ${started}; echo $$ > ${pidFile}; sleep 300; fi; grep -q 'Hello World' README.md"\n`;
    const agent = createFakeClaude([{ write: { "README.md": "# Hello World\n" } }]);
    const dataDir = path.join(tempDir("data"), "lisa");
    const stateFile = path.join(tempDir("state"), "github.json");
    const sandbox = { mode: "off" as const };
    const child = spawn(
      process.execPath,
      [
        LISA_PROCESS,
        JSON.stringify({
          remoteRoot: context.remoteRoot,
          dataDir,
          claudeBinary: agent.binary,
          config,
          stateFile,
          routes: ROUTES,
          sandbox,
        }),
      ],
      { stdio: "ignore" },
    );
    const gate = await waitFor("the gate to start", () => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8")));
    const before = await waitFor("the state file", () =>
      existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, "utf8")) as { comments: FakeComment[] }) : undefined,
    );
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    expect(isAlive(gate)).toBe(true);

    const github = fakeHelloWorld({
      config,
      routes: RESUMED_ROUTES,
      comments: before.comments,
    });
    const harness = context.use(createHarness({ remoteRoot: context.remoteRoot, claudeBinary: agent.binary, dataDir, sandbox }));
    await harness.lisa.start();
    // Killed at start-up, before the resumed run could start the gates again beside it (gone once
    // the kernel has finished it: an orphan is reaped by init).
    await waitFor("the old gate to end", () => !isAlive(gate), 3_000);
    await harness.lisa.idle();
    expect(harness.lisa.store.runsIn("review")).toHaveLength(1);
    expect(github.state.pulls).toHaveLength(1);
  });

  it("fails a run with a comment once it has been interrupted too often, instead of looping", async () => {
    const agent = createFakeClaude([{ write: { "README.md": "# Hello World\n" } }]);
    const dataDir = path.join(tempDir("data"), "lisa");
    const first = createHarness({ remoteRoot: context.remoteRoot, claudeBinary: agent.binary, dataDir });
    const run = first.lisa.store.createRun(
      {
        installation_id: 2,
        owner: OWNER,
        repo: REPO,
        issue_number: 1,
        issue_title: "Spelling error in the README file",
        issue_body: "",
        requested_by: "Codertocat",
        config: JSON.stringify({ label: "bug" }),
      },
      [{ position: 1, owner: OWNER, repo: REPO, branch: BRANCH, baseBranch: "master", scope: null }],
    );
    first.lisa.store.transitionRun(run?.id ?? 0, "claim");
    first.lisa.store.updateRun(run?.id ?? 0, { restarts: 2, comment_id: 77 });
    await first.lisa.stop();

    const github = fakeHelloWorld({
      config: CONFIG,
      routes: ["token", "comment-update", "label-read", "label-set"],
      labels: ["lisa:working"],
      comments: [{ id: 77, body: "<!-- lisa:tracking run=1 -->", user: { login: "lisa[bot]", type: "Bot" } }],
    });
    const harness = context.use(createHarness({ remoteRoot: context.remoteRoot, claudeBinary: agent.binary, dataDir }));
    await harness.lisa.start();
    await harness.lisa.idle();

    expect(agent.calls()).toEqual([]);
    expect(harness.lisa.store.runsIn("failed")).toHaveLength(1);
    expect([...github.state.labels]).toEqual(["lisa:failed"]);
    expect(github.state.comments[0]?.body).toContain("Lisa stopped during this run 3 times, so it gave up");
    expect(github.scope.pendingMocks()).toEqual([]);
  });
});
