import { beforeAll, describe, expect, it } from "vitest";
import type { GitHubEmulator } from "../../emulator/github-emulator.ts";
import type { GitHubPort } from "../../src/github/github-publisher.ts";
import { publishRunState } from "../../src/publication/publish-state.ts";
import { HEADLINE } from "../../src/reporting/tracking-comment.ts";
import * as changes from "../../src/store/run-changes.ts";
import { inProcessGitHub, useMemoryStore } from "../support/in-process-github.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";
import { trackingBody } from "../support/tracking-body.ts";

// publishRunState without a process, a socket or git: the store in memory and the GitHub port over
// the emulator in this process. What an issue shows once a run came to rest, and that publishing it
// again (after a crash between the writes and the mark) adds nothing.

const REPO = "acme/api";

let github: GitHubEmulator;
let port: GitHubPort;
beforeAll(async () => {
  ({ github, port } = inProcessGitHub());
  await github.createRepo(REPO, { files: { "README.md": "# API\n" } });
});

const openStore = useMemoryStore();

/** An issue Lisa labeled as working on, and its run in the store at its first pass, its one step started. */
async function runUnderWay() {
  const issue = await github.createIssue(REPO, { title: "Add a health endpoint", user: "ann" });
  await github.labelIssue(REPO, issue.number, "lisa:working", "lisa[bot]");
  const { store, deps } = openStore();
  const run = await store.runs.create(newRun(issue.number), oneStep(issue.number));
  if (!run) throw new Error("no run");
  await store.runs.claim("w", run.id);
  const pass = await store.passes.current(run.id);
  const [step] = await store.steps.of(run.id);
  if (!pass || !step) throw new Error("no pass or step");
  await store.passes.transition(pass.id, "start");
  await store.passes.transition(pass.id, "planned");
  await store.steps.move(step.id, "start");
  return { deps, store, issue: issue.number, runId: run.id, passId: pass.id, stepId: step.id };
}

const writes = (from: number) =>
  github
    .requests()
    .slice(from)
    .filter((r) => r.method !== "GET")
    .map((r) => `${r.method} ${r.route}`);

describe("publishRunState", () => {
  it("shows a blocked run on its issue: the blocked label in place of working, the tracking comment, and marks it published", async () => {
    const { deps, store, issue, runId, passId, stepId } = await runUnderWay();
    await store.steps.move(stepId, "block");
    expect((await changes.blockRun(store, runId, passId))?.state).toBe("blocked");
    expect((await store.runs.behindOnGitHub()).map((r) => r.id)).toEqual([runId]);

    await publishRunState(deps, port, runId);

    expect(github.labels(REPO, issue)).toEqual(["lisa:blocked"]);
    expect(trackingBody(github, REPO, issue)).toContain(`### Lisa · pass 1 · ${HEADLINE.blocked}`);
    expect(await store.runs.behindOnGitHub()).toEqual([]);
  });

  it("shows a failed run with the failed label and the failure in the tracking comment", async () => {
    const { deps, store, issue, runId, stepId } = await runUnderWay();
    expect(
      (await changes.failRun(store, runId, "the gate's command was not found", [{ id: stepId, error: "no gate" }]))?.state,
    ).toBe("failed");

    await publishRunState(deps, port, runId);

    expect(github.labels(REPO, issue)).toEqual(["lisa:failed"]);
    const tracking = trackingBody(github, REPO, issue);
    expect(tracking).toContain(`### Lisa · pass 1 · ${HEADLINE.failed}`);
    expect(tracking).toContain("the gate's command was not found");
  });

  it("published again (a crash before the mark): no second comment or label, the tracking comment edited in place", async () => {
    const { deps, store, issue, runId, passId, stepId } = await runUnderWay();
    await store.steps.move(stepId, "block");
    await changes.blockRun(store, runId, passId);
    await publishRunState(deps, port, runId);
    const comments = github.comments(REPO, issue).length;
    const from = github.requests().length;

    await publishRunState(deps, port, runId);

    expect(writes(from).filter((write) => write !== "PATCH /repos/:owner/:repo/issues/comments/:id")).toEqual([]);
    expect(github.comments(REPO, issue)).toHaveLength(comments);
    expect(github.labels(REPO, issue)).toEqual(["lisa:blocked"]);
  });

  it("makes GitHub's requests without a socket, each to a route the emulator has", async () => {
    const { deps, store, runId, passId, stepId } = await runUnderWay();
    await store.steps.move(stepId, "block");
    await changes.blockRun(store, runId, passId);
    const from = github.requests().length;

    await publishRunState(deps, port, runId);

    const made = github.requests().slice(from);
    expect(made.length).toBeGreaterThan(0);
    expect(made.filter((r) => r.route === null)).toEqual([]);
    expect(writes(from)).toEqual(
      expect.arrayContaining([
        "POST /repos/:owner/:repo/issues/:number/comments",
        "PUT /repos/:owner/:repo/issues/:number/labels",
      ]),
    );
  });
});
