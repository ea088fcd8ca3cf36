import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EMULATED_WEBHOOK_SECRET, type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import { startLisaChild } from "../../dev/lisa-process.ts";
import { testStoreLocation } from "../../dev/test-database.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { Store } from "../../src/store/store.ts";
import { gitIn, tempDir } from "../support/git-fixtures.ts";
import {
  BRANCH,
  createHelloWorld,
  DELIVERY_ROUTES,
  HELLO_WORLD,
  ISSUE,
  OWNER,
  REPO,
  routesTaken,
} from "../support/hello-world.ts";
import { isAlive } from "../support/process-alive.ts";

const CONFIG = "label: bug\ngates:\n  - grep -q 'Hello World' README.md\n";
const R = "/repos/:owner/:repo";
/**
 * What a restarted Lisa asks of GitHub to finish a run whose tracking comment is already there: no
 * config, no reaction, and no label added (the first Lisa's `lisa:working` is still on the issue,
 * so reaching review swaps it in one write).
 */
const RESUMED_ROUTES = [
  ...DELIVERY_ROUTES.filter(
    (route) =>
      ![`GET ${R}/contents/*path`, `POST ${R}/issues/:number/reactions`, `POST ${R}/issues/:number/labels`].includes(route),
  ),
  // The new Lisa reads the App's delivery log for webhooks no Lisa answered meanwhile (redeliver-missed.ts).
  "GET /app/hook/deliveries",
];
/** Asked for when a webhook went out while no Lisa listened (Lisa's own last writes' may): whether one did is timing. */
const REDELIVERY = "POST /app/hook/deliveries/:id/attempts";

let github: GitHubEmulator | undefined;
let child: ChildProcess | undefined;
let env: EmulatedLisa | undefined;
afterEach(async () => {
  child?.kill("SIGKILL");
  child = undefined;
  // The restarted Lisa's stop stops the emulator it was handed too.
  if (env) await env.stop();
  else await github?.stop();
  env = undefined;
  github = undefined;
});

/** The emulator both Lisas talk to, holding Codertocat's Hello-World with `config`. */
async function emulator(config: string): Promise<GitHubEmulator> {
  github = createGitHubEmulator({ reposRoot: tempDir("restart-repos"), webhookSecret: EMULATED_WEBHOOK_SECRET });
  await github.start();
  await createHelloWorld(github, config);
  return github;
}

const allComments = (gh: GitHubEmulator) => gh.issues(HELLO_WORLD).flatMap((issue) => gh.comments(HELLO_WORLD, issue.number));

describe("a run interrupted by Lisa stopping", () => {
  it("resumes on restart in the same worktree, without a second pull request or tracking comment", async () => {
    // First session hangs as if the agent were mid-work; the one after the restart finishes the job.
    const agent = createFakeClaude([
      { write: { "README.md": "# Hello Wo" }, hang: true },
      { write: { "README.md": "# Hello World\n" } },
    ]);
    const gh = await emulator(CONFIG);
    const dataDir = path.join(tempDir("data"), "lisa");
    const first = await startLisaChild(gh, { dataDir, claudeBinary: agent.binary, secret: EMULATED_WEBHOOK_SECRET });
    child = first;
    await gh.labelIssue(HELLO_WORLD, ISSUE, "bug", OWNER);

    const pids = await waitFor("the agent to start", () => agent.hangingPids());
    await waitFor("the tracking comment", () =>
      gh.comments(HELLO_WORLD, ISSUE).some((c) => c.body.includes("the agent is working")),
    );
    expect(pids).toHaveLength(2);
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    // The agent's sandbox dies with Lisa (bubblewrap's --die-with-parent), and every process in it.
    await waitFor("the agent to die with Lisa", () => (pids.some(isAlive) ? undefined : true), 5_000);

    const from = gh.requests().length;
    env = await startEmulatedLisa({ claudeBinary: agent.binary, github: gh, dataDir });
    await env.settle();

    const [run] = await env.lisa.store.runs.inState("review");
    expect(run?.restarts).toBe(1);
    const sessions = await env.lisa.store.sessions.of((await env.lisa.store.steps.of(run?.id ?? 0))[0]?.id ?? 0);
    expect(sessions.map((s) => [s.iteration, s.purpose, s.state])).toEqual([
      [1, "implement", "interrupted"],
      [2, "resume", "succeeded"],
    ]);
    const calls = agent.calls();
    expect(calls).toHaveLength(2);
    expect(calls[1]?.cwd).toBe(calls[0]?.cwd);
    expect(calls[1]?.prompt).toContain("An earlier session on this task was interrupted");

    const pulls = gh.pulls(HELLO_WORLD);
    expect(pulls).toHaveLength(1);
    expect(pulls[0]?.head.ref).toBe(BRANCH);
    // After the restart the only new comment is the pull request's review package; the tracking comment was found again.
    const posted = gh
      .requests()
      .slice(from)
      .filter((r) => r.method === "POST" && r.path.includes("/comments"));
    expect(posted.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /repos/${OWNER}/${REPO}/issues/${pulls[0]?.number}/comments`,
    ]);
    expect(allComments(gh).filter((c) => c.body.includes("<!-- lisa:pass run=1 pass=1 "))).toHaveLength(1);
    const tracking = allComments(gh).filter((c) => c.body.includes("lisa:tracking"));
    expect(tracking).toHaveLength(1);
    expect(tracking[0]?.body).toContain("Ready for review");
    expect(tracking[0]?.body).toMatch(/Agent session 1: claude, implementing · \d+s · \$0\.00 · interrupted/);
    expect(gitIn(gh.gitDir(HELLO_WORLD), "show", `${BRANCH}:README.md`)).toBe("# Hello World\n");
    expect(routesTaken(gh, from).filter((route) => route !== REDELIVERY)).toEqual([...RESUMED_ROUTES].sort());
  });

  it("ends an unsandboxed gate a killed Lisa left running before the run resumes, then delivers", async () => {
    // Unsandboxed, nothing kills a gate's process group with Lisa: the first gate run sleeps on
    // after the kill; the one after the restart checks the README and passes.
    const marks = tempDir("gate-marks");
    const [started, pidFile] = [path.join(marks, "started"), path.join(marks, "gate.pid")];
    const config = `label: bug\ngates:\n  - "if [ ! -e ${started} ]; then : > ${started}; echo $$ > ${pidFile}; sleep 300; fi; grep -q 'Hello World' README.md"\n`;
    const agent = createFakeClaude([{ write: { "README.md": "# Hello World\n" } }]);
    const gh = await emulator(config);
    const dataDir = path.join(tempDir("data"), "lisa");
    const sandbox = { mode: "off" as const };
    const first = await startLisaChild(gh, { dataDir, claudeBinary: agent.binary, secret: EMULATED_WEBHOOK_SECRET, sandbox });
    child = first;
    await gh.labelIssue(HELLO_WORLD, ISSUE, "bug", OWNER);
    const gate = await waitFor("the gate to start", () => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8")));
    // Killed once Lisa has written the gate down (in the moment between spawning it and that, a
    // killed Lisa's successor cannot know of it): a loaded machine can let the gate run first.
    const children = path.join(dataDir, "children");
    await waitFor(
      "Lisa to record the gate",
      () => existsSync(children) && readdirSync(children).some((owner) => existsSync(path.join(children, owner, String(gate)))),
    );
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    expect(isAlive(gate)).toBe(true);

    const from = gh.requests().length;
    env = await startEmulatedLisa({ claudeBinary: agent.binary, github: gh, dataDir, sandbox });
    // Killed at start-up, before the resumed run could start the gates again beside it (gone once
    // the kernel has finished it: an orphan is reaped by init).
    await waitFor("the old gate to end", () => !isAlive(gate), 3_000).catch((error: Error) => {
      // What the gate is doing (its state letter), for whoever reads a failure.
      const stat = `/proc/${gate}/stat`;
      throw new Error(`${error.message}; ${stat}: ${existsSync(stat) ? readFileSync(stat, "utf8") : "gone"}`);
    });
    await env.settle();
    expect(await env.lisa.store.runs.inState("review")).toHaveLength(1);
    expect(gh.pulls(HELLO_WORLD)).toHaveLength(1);
    expect([...RESUMED_ROUTES, REDELIVERY]).toEqual(expect.arrayContaining(routesTaken(gh, from)));
  });

  it("ends the tools of an unsandboxed agent that exited after its Lisa was killed, at the restart", async () => {
    // The agent starts `sleep 600` in its own process group and ends once the test lets it, after
    // Lisa's kill (a timer could run out first on a loaded machine, and the living Lisa would end
    // the group): the group's leader is gone by the restart (or a zombie, where init is slow to
    // reap), its tool is not.
    const marks = tempDir("agent-marks");
    const toolPid = path.join(marks, "tool.pid");
    const release = path.join(marks, "release");
    const agent = createFakeClaude([
      {
        run: [
          `sleep 600 & echo $! > ${toolPid}; n=0; while [ ! -e ${release} ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done`,
        ],
        write: { "README.md": "# Hello World\n" },
      },
      { write: { "README.md": "# Hello World\n" } },
    ]);
    const gh = await emulator(CONFIG);
    const dataDir = path.join(tempDir("data"), "lisa");
    const sandbox = { mode: "off" as const };
    const first = await startLisaChild(gh, { dataDir, claudeBinary: agent.binary, secret: EMULATED_WEBHOOK_SECRET, sandbox });
    child = first;
    await gh.labelIssue(HELLO_WORLD, ISSUE, "bug", OWNER);
    // Lisa writes the agent down as it spawns it, before the agent can start anything.
    const tool = await waitFor("the agent to start its tool", () => existsSync(toolPid) && Number(readFileSync(toolPid, "utf8")));
    first.kill("SIGKILL");
    await new Promise((resolve) => first.once("exit", resolve));
    writeFileSync(release, "");
    await waitFor("the agent to exit", () => agent.processes().length === 0, 10_000);
    expect(isAlive(tool)).toBe(true);

    env = await startEmulatedLisa({ claudeBinary: agent.binary, github: gh, dataDir, sandbox });
    await waitFor("the agent's tool to end", () => !isAlive(tool), 3_000);
    await env.settle();
    expect(await env.lisa.store.runs.inState("review")).toHaveLength(1);
  });

  it("fails a run with a comment once it has been interrupted too often, instead of looping", async () => {
    const agent = createFakeClaude([{ write: { "README.md": "# Hello World\n" } }]);
    const gh = await emulator(CONFIG);
    // What an earlier Lisa left on the issue: its tracking comment and the working label.
    await gh.commentOnIssue(HELLO_WORLD, ISSUE, "<!-- lisa:tracking run=1 -->", "lisa[bot]");
    await gh.labelIssue(HELLO_WORLD, ISSUE, "lisa:working", "lisa[bot]");
    const [tracked] = gh.comments(HELLO_WORLD, ISSUE);
    const dataDir = path.join(tempDir("data"), "lisa");
    mkdirSync(dataDir, { recursive: true });
    const store = new Store(testStoreLocation(dataDir));
    const run = await store.runs.create(
      {
        installation_id: 1,
        owner: OWNER,
        repo: REPO,
        issue_number: ISSUE,
        issue_title: "Spelling error in the README file",
        issue_body: "",
        requested_by: OWNER,
        config: { label: "bug" },
      },
      [{ position: 1, owner: OWNER, repo: REPO, branch: BRANCH, baseBranch: "master", scope: null }],
    );
    // Claimed for the third time, after two restarts.
    for (let restart = 0; restart < 2; restart++) {
      await store.runs.transition(run?.id ?? 0, "claim");
      await store.runs.transition(run?.id ?? 0, "interrupt", {}, { restart: true });
    }
    await store.runs.transition(run?.id ?? 0, "claim");
    await store.runs.recordTrackingComment(run?.id ?? 0, tracked?.id ?? 0);
    await store.close();

    const from = gh.requests().length;
    env = await startEmulatedLisa({ claudeBinary: agent.binary, github: gh, dataDir });
    const started = env;
    // On PostgreSQL the run is offered to the job queue at start and given up once a worker is
    // handed it: the worker may look idle between the two, so settling alone may come too early.
    await waitFor("the run to be given up", async () => (await started.lisa.store.runs.inState("failed")).length > 0);
    await env.settle();

    expect(agent.calls()).toEqual([]);
    expect(await env.lisa.store.runs.inState("failed")).toHaveLength(1);
    expect(gh.labels(HELLO_WORLD, ISSUE)).toEqual(["lisa:failed"]);
    expect(gh.comments(HELLO_WORLD, ISSUE)[0]?.body).toContain("Lisa stopped during this run 3 times, so it gave up");
    expect(routesTaken(gh, from)).toEqual(
      [
        "POST /app/installations/:id/access_tokens",
        `PATCH ${R}/issues/comments/:id`,
        `GET ${R}/issues/:number/labels`,
        `PUT ${R}/issues/:number/labels`,
      ].sort(),
    );
  });
});
