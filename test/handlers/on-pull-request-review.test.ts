import { describe, expect, it } from "vitest";
import { onPullRequestReview } from "../../src/handlers/on-pull-request-review.ts";
import { OWNER, REPO, type ReviewPayload, reviewPayload } from "./webhook-examples.ts";

/** GitHub's sample review (id 237895671, by Codertocat, at the head of PR #2), with the state and body given. */
const submitted = (state: string, body: string | null = null): ReviewPayload => {
  const payload = reviewPayload("submitted");
  payload.review.state = state;
  payload.review.body = body;
  return payload;
};

const HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
const origin = { installationId: 2, owner: OWNER, repo: REPO, number: 2, isPullRequest: true, sender: "Codertocat" };

describe("onPullRequestReview", () => {
  it("turns an approval into a review gesture at its commit (rule 2)", () => {
    expect(onPullRequestReview(submitted("approved"))).toEqual({
      key: "review:237895671:submitted",
      command: {
        kind: "review",
        ...origin,
        action: "submitted",
        state: "approved",
        reviewId: 237895671,
        commitId: HEAD,
        body: "",
        url: "https://github.com/Codertocat/Hello-World/pull/2#pullrequestreview-237895671",
      },
    });
  });

  it("turns a change request into a review gesture that keeps its body as guidance (rule 5)", () => {
    expect(onPullRequestReview(submitted("changes_requested", "Use the v2 endpoint."))).toMatchObject({
      command: { kind: "review", state: "changes_requested", body: "Use the v2 endpoint.", reviewId: 237895671 },
    });
  });

  it("keeps a change request with an empty body: it still blocks the gate (rule 6)", () => {
    expect(onPullRequestReview(submitted("changes_requested"))).toMatchObject({
      command: { kind: "review", state: "changes_requested", body: "" },
    });
  });

  it("reads the state whatever its case (REST says APPROVED, webhooks approved)", () => {
    expect(onPullRequestReview(submitted("APPROVED"))).toMatchObject({ command: { state: "approved" } });
  });

  it("ignores a commented review without a command (rule 7)", () => {
    expect(onPullRequestReview(submitted("commented", "Nice work."))).toEqual({
      ignored: "a commented review without a command",
    });
  });

  it("lets a /lisa redirect in an approval's body win over the approval (rule 8)", () => {
    expect(onPullRequestReview(submitted("approved", "LGTM, but\n/lisa redirect polish the docs"))).toEqual({
      key: "review:237895671:submitted",
      command: {
        kind: "command",
        ...origin,
        command: { name: "redirect", word: "redirect", text: "polish the docs" },
        where: "review",
        commentId: null,
        reviewId: 237895671,
        url: "https://github.com/Codertocat/Hello-World/pull/2#pullrequestreview-237895671",
        createdAt: "2019-05-15T15:20:38Z",
      },
    });
  });

  it.each(["commented", "changes_requested"])("reads a command in the body of a %s review", (state) => {
    expect(onPullRequestReview(submitted(state, "/lisa status"))).toMatchObject({
      command: { kind: "command", where: "review", command: { name: "status" } },
    });
  });

  it("turns a dismissal into a gesture that re-evaluates the gate (rule 18)", () => {
    expect(onPullRequestReview(reviewPayload("dismissed"))).toEqual({
      key: "review:237895671:dismissed",
      command: {
        kind: "review",
        ...origin,
        action: "dismissed",
        state: "dismissed",
        reviewer: "Codertocat",
        reviewId: 237895671,
        commitId: HEAD,
        body: "",
        url: "https://github.com/Codertocat/Hello-World/pull/2#pullrequestreview-237895671",
      },
    });
  });

  it("keeps a dismissal whose sender is Lisa's own push (stale approvals dismissed, E4)", () => {
    const payload = reviewPayload("dismissed");
    payload.sender = { login: "lisa[bot]", type: "Bot" };
    expect(onPullRequestReview(payload)).toMatchObject({ command: { kind: "review", action: "dismissed", sender: "lisa[bot]" } });
  });

  it.each<[string, (p: ReviewPayload) => void]>([
    ["a Bot sender", (p) => Object.assign(p, { sender: { login: "ci", type: "Bot" } })],
    ["a [bot] login", (p) => Object.assign(p, { sender: { login: "renovate[bot]", type: "User" } })],
    ["a review written by a bot", (p) => Object.assign(p.review, { user: { login: "lisa[bot]", type: "Bot" } })],
  ])("ignores a review by %s, even one with a command", (_who, patch) => {
    const payload = submitted("approved", "/lisa redirect do more");
    patch(payload);
    expect(onPullRequestReview(payload)).toEqual({ ignored: "review by a bot" });
  });

  it.each<[string, (p: ReviewPayload) => void]>([
    ["not from a lisa/ branch", (p) => Object.assign(p.pull_request.head, { ref: "changes" })],
    ["from a fork's lisa/ branch", (p) => Object.assign(p.pull_request.head, { repo: { full_name: "mallory/Hello-World" } })],
    ["from a deleted fork", (p) => Object.assign(p.pull_request.head, { repo: null })],
  ])("ignores a review on a pull request %s (E22)", (_which, patch) => {
    const payload = submitted("approved");
    patch(payload);
    expect(onPullRequestReview(payload)).toEqual({ ignored: "not one of Lisa's pull requests" });
  });

  it("matches the repository whatever the case of its name", () => {
    const payload = submitted("approved");
    payload.pull_request.head.repo = { full_name: "codertocat/hello-world" };
    expect(onPullRequestReview(payload)).toHaveProperty("command");
  });

  it("ignores an edited review", () => {
    expect(onPullRequestReview(reviewPayload("edited"))).toEqual({ ignored: "review edited" });
  });

  it("ignores a review not delivered to an installation", () => {
    const payload = submitted("approved");
    payload.installation = undefined;
    expect(onPullRequestReview(payload)).toEqual({ ignored: "not delivered to an installation" });
  });

  describe("event key", () => {
    const keyOf = (payload: ReviewPayload) => (onPullRequestReview(payload) as { key: string }).key;

    it("is the same for the same review redelivered (E18)", () => {
      expect(keyOf(submitted("approved"))).toBe(keyOf(submitted("approved")));
    });

    it("differs for another review", () => {
      const other = submitted("approved");
      other.review.id = 237895672;
      expect(keyOf(other)).not.toBe(keyOf(submitted("approved")));
    });

    it("differs between a review and its dismissal", () => {
      expect(keyOf(reviewPayload("dismissed"))).not.toBe(keyOf(submitted("approved")));
    });
  });
});
