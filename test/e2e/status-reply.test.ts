import { afterEach, describe, expect, it } from "vitest";
import { type EmulatedLisa, startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude, type FakeInvocation } from "../../dev/fake-agent.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { trackingBody } from "../support/tracking-body.ts";

// `/lisa status` end to end (review-gates design, rule 25): Lisa against the GitHub emulator, people
// acting through its helpers, the agent scripted. Each test reads the one reply Lisa posts.

const REPO = "acme/api";
const CONFIG = "label: lisa\ngates:\n  - test -f health.ts\n";

const change = (text: string): FakeInvocation => ({
  write: { "health.ts": `${text}\n` },
  manifest: { title: "Add a health endpoint", what: `${text}.` },
  result: `${text}: done.`,
});

let env: EmulatedLisa | undefined;
afterEach(async () => {
  await env?.stop();
  env = undefined;
});

/** acme/api with writers ann and bob, and an issue ann labels; `settle: false` returns while pass 1 runs. */
async function labeled(invocations: FakeInvocation[], repo: { config?: string; requiredApprovals?: number } = {}, settle = true) {
  const agent = createFakeClaude(invocations);
  env = await startEmulatedLisa({ claudeBinary: agent.binary });
  const e = env;
  await e.github.createRepo(REPO, {
    files: { "README.md": "# API\n" },
    config: repo.config ?? CONFIG,
    ...(repo.requiredApprovals ? { requiredApprovals: repo.requiredApprovals } : {}),
  });
  e.github.addCollaborator(REPO, "ann", "write");
  e.github.addCollaborator(REPO, "bob", "write");
  const issue = await e.github.createIssue(REPO, { title: "Add a health endpoint", body: "Expose /health.", user: "ann" });
  await e.github.labelIssue(REPO, issue.number, "lisa", "ann");
  if (settle) await e.settle();
  return { agent, e, issue: issue.number };
}

/** Comments `/lisa status` on the issue and returns Lisa's answer to it (while a run works, without waiting for it). */
async function status(e: EmulatedLisa, issue: number, { settle = true } = {}): Promise<string> {
  const before = e.github.comments(REPO, issue).length;
  await e.github.commentOnIssue(REPO, issue, "/lisa status", "ann");
  const replies = () =>
    e.github
      .comments(REPO, issue)
      .slice(before)
      .filter((c) => c.body.includes("<!-- lisa:reply"));
  if (settle) await e.settle();
  else await waitFor("the answer to /lisa status", () => replies().length > 0);
  expect(replies()).toHaveLength(1);
  return replies()[0]?.body ?? "";
}

const trackingUrl = (e: EmulatedLisa, issue: number) => {
  const comment = e.github.comments(REPO, issue).find((c) => c.body.includes("<!-- lisa:tracking"));
  return `${e.github.url}/${REPO}/issues/${issue}#issuecomment-${comment?.id}`;
};
const short = (sha: string | undefined) => `\`${sha?.slice(0, 7)}\``;

describe("/lisa status", () => {
  it("names the state in words, the pass and its limit, who approved at which head, how many more approvals GitHub's rules want, and links the tracking comment", async () => {
    const { e, issue } = await labeled([change("Add GET /health")], {
      config: `${CONFIG}review:\n  accept: github\n`,
      requiredApprovals: 2,
    });
    const [pull] = e.github.pulls(REPO);
    await e.github.submitReview(REPO, pull?.number ?? 0, { state: "APPROVED", user: "ann" });
    await e.settle();

    const reply = await status(e, issue);
    const pr = `[acme/api#${pull?.number}](${e.github.url}/${REPO}/pull/${pull?.number})`;
    expect(reply).toContain(
      `**Run 1 is waiting for review** · pass 1 of at most 5 · details in the [tracking comment](${trackingUrl(e, issue)})`,
    );
    expect(reply).toContain(
      `- ${pr} ⏳ approved by @ann at ${short(pull?.head.sha)}; GitHub's review rule needs 1 more approval`,
    );
    expect(reply).toContain(`**Waiting for:** your review: approve ${pr} to accept the pass, or request changes`);
    expect(reply).not.toMatch(/\breview, pass\b/);
    // The tracking comment says the approval counted, and that GitHub wants more (issue 24, item 5).
    expect(trackingBody(e.github, REPO, issue)).toContain(
      `${pr} ⏳ approved by @ann; GitHub's review rule needs 1 more approval`,
    );
  });

  it("says whose change request blocks, and that an approval of an earlier head must be given again", async () => {
    const { e, issue } = await labeled([change("Add GET /health")], {
      config: `${CONFIG}review:\n  changes_requested: ignore\n`,
    });
    const [pull] = e.github.pulls(REPO);
    const number = pull?.number ?? 0;
    await e.github.submitReview(REPO, number, { state: "CHANGES_REQUESTED", body: "Not like this.", user: "bob" });
    await e.settle();
    const blocked = await status(e, issue);
    expect(blocked).toContain("❌ changes requested by @bob; needs their approval, or the review dismissed");

    await e.github.submitReview(REPO, number, { state: "APPROVED", user: "bob" });
    await e.github.submitReview(REPO, number, { state: "APPROVED", user: "ann" });
    await e.settle();
    expect(await status(e, issue)).toContain("**Run 1 is accepted**");
    // A human push after the approvals: they were given to a head the PR no longer has.
    const { sha } = await e.github.pushCommit(REPO, pull?.head.ref ?? "", {
      files: { "NOTES.md": "typo\n" },
      message: "Fix a typo",
      user: "bob",
    });
    await e.settle();
    const stale = await status(e, issue);
    expect(stale).toContain("**Run 1 is waiting for review**");
    expect(stale).toContain(
      `⏳ needs an approval at ${short(sha)} from someone with write access (@bob, @ann approved an earlier head)`,
    );
  });

  it("while the agent works, names the step and what it does; once stopped, what can follow", async () => {
    const { agent, e, issue } = await labeled([{ ...change("Add GET /health"), hang: true }], {}, false);
    await waitFor("the agent to start", () => agent.hangingPids());
    const working = await status(e, issue, { settle: false });
    expect(working).toContain("**Run 1 is working** · pass 1 of at most 5");
    expect(working).toContain("- acme/api: no pull request yet · the agent is working");
    expect(working).toContain("**Waiting for:** step 1 on acme/api: the agent is working");

    await e.github.commentOnIssue(REPO, issue, "/lisa abort", "ann");
    await e.settle();
    const stopped = await status(e, issue);
    expect(stopped).toContain("**Run 1 is stopped** · pass 1 of at most 5");
    expect(stopped).toContain("**Waiting for:** you: `/lisa redirect <guidance>` to start pass 2");
  });
});
