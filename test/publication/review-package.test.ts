import { beforeAll, describe, expect, it } from "vitest";
import type { GitHubEmulator } from "../../emulator/github-emulator.ts";
import type { GitHubPort } from "../../src/github/github-publisher.ts";
import { publishPackage, publishThreadReplies } from "../../src/publication/review-package.ts";
import { passMarker } from "../../src/reporting/review-package.ts";
import { inProcessGitHub, runOnBranch, useMemoryStore } from "../support/in-process-github.ts";

// A pass's package and its thread replies on a step's pull request, written from the store: the
// emulator in this process, the store in memory.

const REPO = "acme/api";
let github: GitHubEmulator;
let port: GitHubPort;
beforeAll(async () => {
  ({ github, port } = inProcessGitHub());
  await github.createRepo(REPO, { files: { "README.md": "# api\n" } });
});
const openStore = useMemoryStore();

/** Ann's run, its step's pull request open with a head of Lisa's, and bob's inline comment on it as the pass's guidance. */
async function passOnPullRequest() {
  const { store, deps } = openStore();
  const { branch, run, pass, step } = await runOnBranch(github, store, "Add a health endpoint", "health.ts");
  const pull = await port.ensurePullRequest(
    { owner: "acme", repo: "api" },
    { title: "Health", body: "", head: branch, base: "main" },
  );
  const inline = await github.commentInline(REPO, pull.number, {
    path: "health.ts",
    line: 1,
    body: "Name it healthz",
    user: "bob",
  });
  const commentId = (inline.payload.comment as { id: number }).id;
  await store.guidance.add(
    run.id,
    [
      {
        delivery_id: inline.id,
        source: "inline",
        owner: "acme",
        repo: "api",
        pr_number: pull.number,
        author: "bob",
        url: null,
        github_id: commentId,
        path: "health.ts",
        line: 1,
        diff_hunk: null,
        outdated: 0,
        body: "Name it healthz",
      },
    ],
    pass.number,
  );
  await store.steps.record(step.id, {
    pr_number: pull.number,
    pr_url: pull.url,
    pr_state: "open",
    head_sha: "abcdef1234567890",
    manifest: {
      title: "Health",
      what: "Adds /healthz.",
      guidance: [{ id: "g1", status: "addressed", note: "Renamed to /healthz" }],
    },
  });
  const ctx = { deps, gh: port, run, pass };
  const [guidance] = await store.guidance.forPass(pass.id);
  const replies = () => github.reviewComments(REPO, pull.number).filter((c) => c.in_reply_to_id === commentId);
  return { store, ctx, step: () => store.steps.get(step.id), pull: pull.number, commentId, guidance, replies };
}

describe("publishThreadReplies", () => {
  it("answers the comment that guided the pass in its thread, with what the agent said of it and at which head, once", async () => {
    const { store, ctx, step, replies, guidance } = await passOnPullRequest();
    await publishThreadReplies(ctx, (await step()).id);
    expect(replies()).toHaveLength(1);
    expect(replies()[0]?.body).toContain("Pass 1: addressed: Renamed to /healthz (at `abcdef1`).");
    expect((await store.guidance.forPass(ctx.pass.id)).find((g) => g.id === guidance?.id)?.replied).toBe(1);

    await publishThreadReplies(ctx, (await step()).id);
    expect(replies()).toHaveLength(1);
  });

  it("finds its answer again by its marker after a crash, and writes no second one", async () => {
    const { store, ctx, step, pull, commentId, replies, guidance } = await passOnPullRequest();
    // The answer went out, and Lisa stopped before the store kept that it had.
    await github.commentInline(REPO, pull, {
      path: "health.ts",
      line: 1,
      body: `<!-- lisa:thread guidance=${guidance?.id} -->\nPass 1: addressed (at \`abcdef1\`).`,
      user: "lisa[bot]",
      inReplyTo: commentId,
    });
    await publishThreadReplies(ctx, (await step()).id);
    expect(replies()).toHaveLength(1);
    expect((await store.guidance.forPass(ctx.pass.id)).find((g) => g.id === guidance?.id)?.replied).toBe(1);
  });
});

describe("publishPackage", () => {
  it("writes the pass's package once under its marker, edits it in place, and finds it again when the store lost its id", async () => {
    const { store, ctx, step, pull } = await passOnPullRequest();
    const stepId = (await step()).id;
    const packages = () => github.comments(REPO, pull).filter((c) => c.body.startsWith(passMarker(ctx.run.id, 1, stepId)));
    await publishPackage(ctx, await step(), "Pass 1 is working");
    await publishPackage(ctx, await step(), "Pass 1 is ready");
    const record = await store.steps.inPass(stepId, ctx.pass.id);
    expect(record?.package_comment_id).toEqual(expect.any(Number));
    await store.steps.recordInPass(record?.id ?? 0, { package_comment_id: null });
    await publishPackage(ctx, await step(), "Pass 1 is ready, again");
    expect(packages()).toHaveLength(1);
    expect(packages()[0]?.body).toContain("Pass 1 is ready, again");
    expect((await store.steps.inPass(stepId, ctx.pass.id))?.package_comment_id).toBe(record?.package_comment_id);
  });
});
