import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import type { EmulatedLisa } from "../../dev/emulated-lisa.ts";
import type { FakeInvocation } from "../../dev/fake-agent.ts";
import { TEST_APP_ID } from "../../dev/test-probot.ts";
import { ACTIONS_APP_ID } from "../../emulator/apps.ts";
import { type CiCheck, DEPENDABOT } from "../../emulator/github-emulator.ts";
import { CONFIG, REPO, runOf, passOne as startPassOne } from "../support/pass-one.ts";

// The CI gate among the other Apps GitHub knows of (issue 37): every push gets an empty queued
// check suite for each App installed with `checks: write` (Dependabot here, and Lisa's own App),
// most of which never report a check run; and check runs of other Apps are theirs alone to update.

const write = (text: string): FakeInvocation => ({
  write: { "health.ts": `${text}\n` },
  manifest: { title: "Add a health endpoint", what: `${text}.` },
  result: `${text}: done.`,
});

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

const passOne = (ci: CiCheck[]) =>
  startPassOne(
    [write("export const ok = true")],
    CONFIG,
    (e) => {
      env = e;
    },
    { repo: { ci } },
  );

/** The check suites on `sha` as the API lists them: app, status, runs. */
async function suitesOn(github: EmulatedLisa["github"], sha: string) {
  const octokit = new Octokit({ baseUrl: github.url, auth: github.createInstallationToken() });
  const { data } = await octokit.rest.checks.listSuitesForRef({ owner: "acme", repo: "api", ref: sha });
  return data.check_suites
    .map((suite) => ({ app: suite.app?.id, status: suite.status, runs: suite.latest_check_runs_count }))
    .sort((a, b) => (a.app ?? 0) - (b.app ?? 0));
}

describe("the CI gate among other Apps' check suites", () => {
  it("opens the review gate once CI passes, whatever empty suites Dependabot and Lisa's own App have on the head", async () => {
    const { agent, github, pull } = await passOne([{ name: "build" }]);
    expect((await runOf(env as EmulatedLisa)).state).toBe("review");
    expect(agent.calls()).toHaveLength(1);
    const head = pull.head.sha;
    // GitHub's suites on Lisa's head: Lisa's holds her check run, Dependabot's stays queued and empty for good.
    expect(await suitesOn(github, head)).toEqual([
      { app: TEST_APP_ID, status: "completed", runs: 1 },
      { app: ACTIONS_APP_ID, status: "completed", runs: 1 },
      { app: DEPENDABOT.id, status: "queued", runs: 0 },
    ]);
    const lisa = github.checkRuns(REPO).find((run) => run.name === "Lisa" && run.head_sha === head);
    expect(lisa?.output.summary).toContain("✅ CI `build`");
  });

  it("asks for review in a repository with no CI at all, where the only suites are empty", async () => {
    const { agent, github, pull } = await passOne([]);
    expect((await runOf(env as EmulatedLisa)).state).toBe("review");
    expect(agent.calls()).toHaveLength(1);
    expect(await suitesOn(github, pull.head.sha)).toEqual([
      { app: TEST_APP_ID, status: "completed", runs: 1 },
      { app: DEPENDABOT.id, status: "queued", runs: 0 },
    ]);
  });

  it("never updates another App's check run, even one named as hers: a workflow's `Lisa` job stays its own", async () => {
    const { github, pull } = await passOne([{ name: "Lisa" }]);
    expect((await runOf(env as EmulatedLisa)).state).toBe("review");
    const onHead = github.checkRuns(REPO).filter((run) => run.name === "Lisa" && run.head_sha === pull.head.sha);
    expect(onHead.map((run) => [run.app.id, run.conclusion])).toEqual(
      expect.arrayContaining([
        [ACTIONS_APP_ID, "success"],
        [TEST_APP_ID, "success"],
      ]),
    );
    expect(onHead.find((run) => run.app.id === ACTIONS_APP_ID)?.output.title).toBe("Passed");
    // GitHub answers such an update 403: Lisa never sent one.
    expect(github.requests().filter((r) => r.path.includes("/check-runs/") && r.status === 403)).toEqual([]);
  });
});
