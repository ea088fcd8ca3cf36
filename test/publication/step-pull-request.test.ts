import { beforeAll, describe, expect, it } from "vitest";
import type { GitHubEmulator } from "../../emulator/github-emulator.ts";
import type { GitHubPort } from "../../src/github/github-publisher.ts";
import {
  publishReadyForReview,
  publishStepPullRequest,
  publishStepPullRequestBody,
  publishWorkingDraft,
} from "../../src/publication/step-pull-request.ts";
import { BODY_START } from "../../src/reporting/pr-body.ts";
import type { NewGuidance } from "../../src/store/store.ts";
import { inProcessGitHub, runOnBranch, useMemoryStore } from "../support/in-process-github.ts";

// A step's pull request as its pass stands, decided from the store: the emulator in this process,
// the store in memory.

const REPO = "acme/api";
let github: GitHubEmulator;
let port: GitHubPort;
beforeAll(async () => {
  ({ github, port } = inProcessGitHub());
  await github.createRepo(REPO, { files: { "README.md": "# api\n" } });
});
const openStore = useMemoryStore();

const guidance = (author: string, body: string): NewGuidance => ({
  delivery_id: `d-${author}-${body}`,
  source: "review",
  owner: "acme",
  repo: "api",
  pr_number: null,
  author,
  url: null,
  github_id: null,
  path: null,
  line: null,
  diff_hunk: null,
  outdated: 0,
  body,
});

/** Ann's run with one step whose pull request is open (a draft, or ready), and the context to publish it with. */
async function stepWithPullRequest(options: { draft: boolean; draftUntilReview?: boolean }) {
  const { draft, draftUntilReview = true } = options;
  const { store, deps } = openStore();
  const { branch, run, pass, step } = await runOnBranch(github, store, "Add a health endpoint", "health.ts");
  const pull = await port.ensurePullRequest(
    { owner: "acme", repo: "api" },
    { title: "Health", body: "", head: branch, base: "main", draft },
  );
  await store.steps.record(step.id, { pr_number: pull.number, pr_url: pull.url, pr_state: "open", draft: draft ? 1 : 0 });
  const ctx = { deps, gh: port, run, pass, secrets: [], draftUntilReview };
  const shown = () => github.pulls(REPO).find((p) => p.number === pull.number);
  return {
    store,
    ctx,
    runId: run.id,
    passId: pass.id,
    stepId: step.id,
    pull,
    branch,
    shown,
    step: () => store.steps.get(step.id),
  };
}

describe("publishWorkingDraft", () => {
  it("turns the pull request a pass is about to work on into a draft, and records it", async () => {
    const { ctx, shown, step } = await stepWithPullRequest({ draft: false });
    await publishWorkingDraft(ctx, await step());
    expect(shown()?.draft).toBe(true);
    expect((await step()).draft).toBe(1);
  });

  it("leaves it as it is where the configuration keeps pull requests ready (review.draft_until_review: false)", async () => {
    const { ctx, shown, step } = await stepWithPullRequest({ draft: false, draftUntilReview: false });
    const before = github.requests().length;
    await publishWorkingDraft(ctx, await step());
    expect(shown()?.draft).toBe(false);
    expect(github.requests().length).toBe(before);
  });

  it("writes the body's pass-in-progress section instead where GitHub refuses the draft", async () => {
    const { ctx, shown, step } = await stepWithPullRequest({ draft: false });
    github.injectFault({ method: "POST", path: /^\/graphql$/, body: /convertPullRequestToDraft/, kind: "server_error" });
    await publishWorkingDraft(ctx, await step());
    expect(shown()?.draft).toBe(false);
    expect(shown()?.body).toContain(BODY_START);
    expect((await step()).draft).toBe(0);
  });
});

describe("publishReadyForReview", () => {
  it("marks the draft ready and asks the requester, this pass's guides and the blockers, never a bot", async () => {
    const { store, ctx, runId, stepId, shown, step } = await stepWithPullRequest({ draft: true });
    await store.guidance.add(runId, [guidance("bob", "Name it /healthz"), guidance("ci-helper[bot]", "lint")], 1);
    await store.steps.record(stepId, {
      gate: { repo: REPO, number: 1, url: "", status: "changes_requested", approvers: [], blockers: ["carol"], headSha: "" },
    });

    const pr = await publishReadyForReview(ctx, await step());

    expect(pr?.draft).toBe(true);
    expect(shown()?.draft).toBe(false);
    expect((await step()).draft).toBe(0);
    expect(
      shown()
        ?.requested_reviewers.map((r) => r.login)
        .sort(),
    ).toEqual(["ann", "bob", "carol"]);
  });

  it("still asks for review where GitHub refuses to mark it ready", async () => {
    const { ctx, shown, step } = await stepWithPullRequest({ draft: true });
    github.injectFault({ method: "POST", path: /^\/graphql$/, body: /markPullRequestReadyForReview/, kind: "server_error" });
    await publishReadyForReview(ctx, await step());
    expect(shown()?.draft).toBe(true);
    expect(shown()?.requested_reviewers.map((r) => r.login)).toEqual(["ann"]);
  });
});

describe("publishStepPullRequest", () => {
  /** A run whose step has its branch pushed and no pull request yet. */
  async function stepWithBranch() {
    const { store, deps } = openStore();
    const { branch, run, pass, step } = await runOnBranch(github, store, "Add a readiness probe", "ready.ts");
    const ctx = { deps, gh: port, run, pass, secrets: [], draftUntilReview: true };
    const opened = () => github.pulls(REPO).filter((p) => p.head.ref === branch);
    return { store, ctx, step: () => store.steps.get(step.id), opened };
  }

  it("opens the step's pull request as a draft with the composed text, and records it", async () => {
    const { ctx, step, opened } = await stepWithBranch();
    const published = await publishStepPullRequest(ctx, await step(), { base: "main", gateNext: false });
    expect(opened()).toHaveLength(1);
    expect(opened()[0]).toMatchObject({
      number: published.number,
      draft: true,
      title: expect.stringContaining("readiness probe"),
    });
    expect(opened()[0]?.body).toContain(BODY_START);
    expect(await step()).toMatchObject({ pr_number: published.number, pr_url: published.url, pr_state: "open", draft: 1 });
  });

  it("opens it ready when the pass's gate opens right after", async () => {
    const { ctx, step, opened } = await stepWithBranch();
    await publishStepPullRequest(ctx, await step(), { base: "main", gateNext: true });
    expect(opened()[0]?.draft).toBe(false);
  });

  it("finds a pull request opened before a crash again instead of opening a second, and writes nothing it shows", async () => {
    const { ctx, step, opened } = await stepWithBranch();
    const first = await publishStepPullRequest(ctx, await step(), { base: "main", gateNext: false });
    // The crash came before the store recorded it.
    await ctx.deps.store.steps.record((await step()).id, { pr_number: null, pr_url: null, pr_state: null });
    const writes = () => github.requests().filter((r) => r.method !== "GET").length;
    const before = writes();
    const again = await publishStepPullRequest(ctx, await step(), { base: "main", gateNext: false });
    expect(again.number).toBe(first.number);
    expect(opened()).toHaveLength(1);
    expect(writes() - before).toBe(0);
  });

  it("leaves a pull request a human closed closed, and says so", async () => {
    const { ctx, step, opened } = await stepWithBranch();
    const first = await publishStepPullRequest(ctx, await step(), { base: "main", gateNext: false });
    await github.closePull(REPO, first.number, "ann");
    await ctx.deps.store.steps.record((await step()).id, { pr_number: null, pr_url: null, pr_state: null });
    const again = await publishStepPullRequest(ctx, await step(), { base: "main", gateNext: false });
    expect(again).toMatchObject({ number: first.number, state: "closed" });
    expect(opened()[0]?.state).toBe("closed");
  });
});

describe("publishStepPullRequestBody", () => {
  it("writes the composed body once, and nothing when the pull request shows it", async () => {
    const { ctx, step, shown } = await stepWithPullRequest({ draft: true });
    const patches = () => github.requests().filter((r) => r.method === "PATCH").length;
    const before = patches();
    await publishStepPullRequestBody(ctx, await step());
    expect(shown()?.body).toContain(BODY_START);
    await publishStepPullRequestBody(ctx, await step());
    expect(patches() - before).toBe(1);
  });
});
