import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../dev/wait-for.ts";
import { ACTIONS_APP_ID } from "../../emulator/apps.ts";
import { createGitHubEmulator, DEPENDABOT, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { parseConfig } from "../../src/config/parse-config.ts";
import { createGitHubPort } from "../../src/github/create-github-port.ts";
import { LisaOctokit } from "../../src/github/lisa-octokit.ts";
import { type PageCache, pageCache } from "../../src/github/page-cache.ts";
import { readCi } from "../../src/workflow/checks/read-ci.ts";
import { tempDir } from "../support/git-fixtures.ts";

// The port's reads of a pull request's CI (issue 25), against the emulator's CI.

const REF = { owner: "acme", repo: "api" };
/** Lisa's App in the emulator (its check runs are hers, never CI). */
const LISA_APP = 1;

let github: GitHubEmulator | undefined;
afterEach(async () => {
  await github?.stop();
  github = undefined;
});

async function emulated(permissions?: Record<string, "read" | "write">, pages?: PageCache) {
  const emulator = createGitHubEmulator({
    reposRoot: tempDir("ci-repos"),
    webhookSecret: "s",
    ...(permissions ? { permissions } : {}),
  });
  github = emulator;
  await emulator.start();
  await emulator.createRepo("acme/api", {
    files: { "README.md": "# API\n" },
    ci: [
      { name: "test", failsWhile: { file: "a.ts", text: "TODO" } },
      { name: "ci/lint", as: "status" },
    ],
  });
  const octokit = new LisaOctokit({
    baseUrl: emulator.url,
    auth: { token: emulator.createInstallationToken() },
    retry: { enabled: false },
    throttle: { enabled: false },
  });
  const gh = createGitHubPort(octokit as never, async () => "token", {
    appId: async () => LISA_APP,
    ...(pages ? { pageCache: pages } : {}),
  });
  const { sha } = await emulator.pushCommit("acme/api", "main", {
    files: { "a.ts": "x\n// TODO\n" },
    message: "wip",
    user: "ann",
  });
  await emulator.waitForWebhooks();
  return { emulator, gh, sha };
}

describe("the port's reads of a commit's CI", () => {
  it("polls conditionally: an unchanged head's lists come back 304 on their ETags, a new check run 200", async () => {
    const { emulator, gh, sha } = await emulated(undefined, pageCache());
    const polled = (from: number) =>
      emulator
        .requests()
        .slice(from)
        .filter((r) => /\/commits\/[0-9a-f]+\/(check-runs|check-suites|status)/.test(r.path))
        .map((r) => ({
          list: r.path.split("?")[0]?.split("/").at(-1),
          status: r.status,
          conditional: r.ifNoneMatch !== undefined,
        }))
        .sort((a, b) => String(a.list).localeCompare(String(b.list)));
    let from = emulator.requests().length;
    const first = await gh.ciOf(REF, sha);
    expect(polled(from).map((r) => [r.list, r.status, r.conditional])).toEqual([
      ["check-runs", 200, false],
      ["check-suites", 200, false],
      ["status", 200, false],
    ]);
    from = emulator.requests().length;
    expect(await gh.ciOf(REF, sha)).toEqual(first);
    expect(polled(from).map((r) => [r.list, r.status, r.conditional])).toEqual([
      ["check-runs", 304, true],
      ["check-suites", 304, true],
      ["status", 304, true],
    ]);
    await emulator.addCheckRun("acme/api", { sha, name: "e2e", appId: 77, conclusion: "success" });
    from = emulator.requests().length;
    const changed = await gh.ciOf(REF, sha);
    expect(changed.runs.map((r) => r.name).sort()).toEqual(["e2e", "test"]);
    expect(polled(from).find((r) => r.list === "check-runs")).toEqual({ list: "check-runs", status: 200, conditional: true });
    // Lisa's own check, looked up before she writes it, is a conditional read too.
    await gh.findCheckRun(REF, sha, "Lisa");
    from = emulator.requests().length;
    await gh.findCheckRun(REF, sha, "Lisa");
    expect(polled(from).map((r) => [r.status, r.conditional])).toEqual([[304, true]]);
  });

  it("reads other Apps' check runs and suites and the commit statuses, never Lisa's own check", async () => {
    const { emulator, gh, sha } = await emulated();
    await emulator.addCheckRun("acme/api", { sha, name: "Lisa", appId: LISA_APP, conclusion: "success" });
    const ci = await gh.ciOf(REF, sha);
    expect(ci.runs.map((r) => [r.name, r.status, r.conclusion])).toEqual([["test", "completed", "failure"]]);
    // The CI's suite, and the empty one GitHub makes for Dependabot at every push; Lisa's own is not read.
    expect(ci.suites.map((s) => [s.appId, s.status, s.runs]).sort(([a], [b]) => Number(a) - Number(b))).toEqual([
      [ACTIONS_APP_ID, "completed", 1],
      [DEPENDABOT.id, "queued", 0],
    ]);
    expect(ci.statuses.map((s) => [s.context, s.state])).toEqual([["ci/lint", "success"]]);
    const [run] = ci.runs;
    expect(await gh.checkAnnotations(REF, run?.id ?? 0, 20)).toEqual(['a.ts:2: failure: a.ts still contains "TODO"']);
    expect(await gh.jobLog(REF, run?.id ?? 0)).toContain("##[error]Process completed with exit code 1.");
  });

  it("reads a job's log where GitHub's 302 sends it, another host, without sending it Lisa's token", async () => {
    const { emulator, gh, sha } = await emulated();
    const [run] = (await gh.ciOf(REF, sha)).runs;
    expect(await gh.jobLog(REF, run?.id ?? 0)).toContain("##[error]Process completed with exit code 1.");
    expect(emulator.logDownloads()).toEqual([{ path: `/acme/api/jobs/${run?.id}`, authorization: false, status: 200 }]);
  });

  it("follows a re-run: the newest run of a check is the one read", async () => {
    const { emulator, gh, sha } = await emulated();
    const [first] = (await gh.ciOf(REF, sha)).runs;
    emulator.setCi("acme/api", [{ name: "test" }]);
    emulator.rerunCheck("acme/api", first?.id ?? 0);
    await waitFor("the re-run to pass", async () => (await gh.ciOf(REF, sha)).runs.find((r) => r.conclusion === "success"));
    expect((await gh.ciOf(REF, sha)).runs).toHaveLength(1);
  });

  it("reads every page: a failure on the second page of 150 check runs and of 120 status contexts keeps the gate closed", async () => {
    const { emulator, gh, sha } = await emulated();
    for (let i = 1; i <= 150; i += 1) {
      await emulator.addCheckRun("acme/api", {
        sha,
        name: `shard ${i}`,
        appId: 77,
        conclusion: i === 150 ? "failure" : "success",
      });
    }
    for (let i = 1; i <= 120; i += 1) {
      await emulator.addStatus("acme/api", { sha, context: `ci/part-${i}`, state: i === 120 ? "failure" : "success" });
    }
    const ci = await gh.ciOf(REF, sha);
    expect(ci.runs).toHaveLength(151);
    expect(ci.statuses).toHaveLength(121);
    const { checks } = await readCi(gh, REF, sha, { ci: parseConfig({}).ci, required: [] });
    expect(checks.filter((check) => check.state === "failed").map((check) => check.name)).toEqual(
      expect.arrayContaining(["shard 150", "ci/part-120"]),
    );
  });

  it("reads what it may where the owner has not accepted `statuses` and `actions` yet", async () => {
    const { gh, sha } = await emulated({
      contents: "write",
      issues: "write",
      pull_requests: "write",
      checks: "write",
      metadata: "read",
    });
    const ci = await gh.ciOf(REF, sha);
    expect(ci.runs.map((r) => r.name)).toEqual(["test"]);
    expect(ci.statuses).toEqual([]);
    expect(await gh.jobLog(REF, ci.runs[0]?.id ?? 0)).toBeUndefined();
  });
});
