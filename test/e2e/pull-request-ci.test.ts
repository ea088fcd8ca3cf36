import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import type { CiCheck } from "../../emulator/github-emulator.ts";
import { runOf } from "../support/pass-one.ts";

// The pull request's own CI is a gate (issue 25): Lisa waits for the checks on the head she
// pushed, and a failing one goes back to the agent, with its report fenced, before review.

const REPO = "acme/api";
const CONFIG = "label: lisa\ngates:\n  - test -f health.ts\n";

const write = (text: string): FakeInvocation => ({
  write: { "health.ts": `${text}\n` },
  manifest: { title: "Add a health endpoint", what: `${text}.` },
  result: `${text}: done.`,
});

/** The test job fails while health.ts contains TODO, as a GitHub Actions check run. */
const TESTS: CiCheck = { name: "test", failsWhile: { file: "health.ts", text: "TODO" }, log: "FAIL test/health.test.ts" };

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

/** A repository with `ci`, whose issue ann labels; pass 1 runs with the agent's `invocations`. */
async function passOne(invocations: FakeInvocation[], ci: CiCheck[], config = CONFIG) {
  const agent = createFakeClaude(invocations);
  env = await startEmulatedLisa({ claudeBinary: agent.binary });
  const { github } = env;
  await github.createRepo(REPO, { files: { "README.md": "# API\n" }, config, ci });
  github.addCollaborator(REPO, "ann", "write");
  const issue = await github.createIssue(REPO, { title: "Add a health endpoint", body: "Expose /health.", user: "ann" });
  await github.labelIssue(REPO, issue.number, "lisa", "ann");
  await env.settle();
  const [pull] = github.pulls(REPO);
  if (!pull) throw new Error("pass 1 opened no pull request");
  return { agent, github, issue, pull, env };
}

const lisaCheck = (github: EmulatedLisa["github"], sha: string) =>
  github.checkRuns(REPO).find((run) => run.name === "Lisa" && run.head_sha === sha);

describe("the pull request's CI as a gate", () => {
  it("opens the review gate once CI passes, listing each check with its result", async () => {
    const { agent, github, pull, issue } = await passOne(
      [write("export const ok = true")],
      [TESTS, { name: "ci/lint", as: "status", delayMs: 100 }],
    );
    const run = await runOf(env as EmulatedLisa);
    expect(run.state).toBe("review");
    expect(agent.calls()).toHaveLength(1);
    const head = pull.head.sha;
    // Lisa asked for review only after the checks completed.
    const ci = github.checkRuns(REPO).find((r) => r.name === "test" && r.head_sha === head);
    expect(ci).toMatchObject({ status: "completed", conclusion: "success" });
    expect(
      github
        .statuses(REPO)
        .filter((s) => s.sha === head)
        .at(-1),
    ).toMatchObject({ context: "ci/lint", state: "success" });
    const review = github.requests().findIndex((r) => r.method === "POST" && r.path.endsWith("/requested_reviewers"));
    const lastRead = github
      .requests()
      .findLastIndex((r) => r.path.includes(`/commits/${head}/check-runs`) && !r.path.includes("check_name"));
    expect(lastRead).toBeGreaterThan(-1);
    expect(review).toBeGreaterThan(lastRead);
    // The Lisa check run and the review package list each check at the reviewed head; Lisa's own is not one of them.
    const summary = lisaCheck(github, head)?.output.summary ?? "";
    expect(summary).toContain("✅ CI `test`");
    expect(summary).toContain("✅ CI `ci/lint`");
    expect(summary).not.toContain("CI `Lisa`");
    const pkg = github
      .comments(REPO, pull.number)
      .map((c) => c.body)
      .join("\n");
    expect(pkg).toContain("✅ CI `test`");
    expect(github.comments(REPO, issue.number).some((c) => c.body.includes("CI still running"))).toBe(false);
  });
});
