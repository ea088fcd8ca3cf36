import { describe, expect, it } from "vitest";
import { onPullRequestReviewComment } from "../../src/handlers/on-pull-request-review-comment.ts";
import { OWNER, REPO, type ReviewCommentPayload, reviewCommentPayload } from "./webhook-examples.ts";

/** GitHub's sample inline comment (id 284312630 on README.md, line 265 of PR #2), with the body given. */
const inline = (body: string, action = "created"): ReviewCommentPayload => {
  const payload = reviewCommentPayload(action);
  payload.comment.body = body;
  return payload;
};

describe("onPullRequestReviewComment", () => {
  it("turns an inline /lisa redirect into a command that carries its place in the diff (rule 9c)", () => {
    expect(onPullRequestReviewComment(inline("/lisa redirect use more emoji here"))).toEqual({
      key: "review_comment:284312630",
      command: {
        kind: "command",
        installationId: 2,
        owner: OWNER,
        repo: REPO,
        number: 2,
        isPullRequest: true,
        sender: "Codertocat",
        command: { name: "redirect", word: "redirect", text: "use more emoji here" },
        where: "inline",
        commentId: 284312630,
        reviewId: 237895671,
        url: "https://github.com/Codertocat/Hello-World/pull/2#discussion_r284312630",
        createdAt: "2019-05-15T15:20:37Z",
        inline: { path: "README.md", line: 265, diffHunk: "@@ -1 +1 @@\n-# Hello-World", inReplyTo: null, outdated: false },
      },
    });
  });

  it("finds the command on a later line of the comment", () => {
    expect(onPullRequestReviewComment(inline("This reads oddly.\n/lisa redirect reword it"))).toMatchObject({
      command: { command: { name: "redirect", text: "reword it" } },
    });
  });

  it("keeps the thread a reply belongs to", () => {
    const payload = inline("/lisa redirect as said above");
    payload.comment.in_reply_to_id = 284312000;
    expect(onPullRequestReviewComment(payload)).toMatchObject({ command: { inline: { inReplyTo: 284312000 } } });
  });

  it("marks a comment on a line no longer in the diff as outdated, at its original line (E13)", () => {
    const payload = inline("/lisa redirect fix this");
    payload.comment.line = null;
    payload.comment.original_line = 12;
    expect(onPullRequestReviewComment(payload)).toMatchObject({ command: { inline: { line: 12, outdated: true } } });
  });

  it("ignores an inline comment without a command: a later redirect picks it up (rule 7)", () => {
    expect(onPullRequestReviewComment(reviewCommentPayload())).toEqual({ ignored: "not a /lisa command" });
  });

  it.each(["edited", "deleted"])("ignores an inline comment %s", (action) => {
    expect(onPullRequestReviewComment(inline("/lisa redirect later", action))).toEqual({ ignored: `review comment ${action}` });
  });

  it.each<[string, (p: ReviewCommentPayload) => void]>([
    ["a Bot sender", (p) => Object.assign(p, { sender: { login: "ci", type: "Bot" } })],
    ["a comment written by a bot", (p) => Object.assign(p.comment, { user: { login: "lisa[bot]", type: "Bot" } })],
  ])("ignores %s", (_who, patch) => {
    const payload = inline("/lisa redirect do more");
    patch(payload);
    expect(onPullRequestReviewComment(payload)).toEqual({ ignored: "comment by a bot" });
  });

  it.each<[string, (p: ReviewCommentPayload) => void]>([
    ["not from a lisa/ branch", (p) => Object.assign(p.pull_request.head, { ref: "changes" })],
    ["from a fork", (p) => Object.assign(p.pull_request.head, { repo: { full_name: "mallory/Hello-World" } })],
  ])("ignores a comment on a pull request %s", (_which, patch) => {
    const payload = inline("/lisa redirect do more");
    patch(payload);
    expect(onPullRequestReviewComment(payload)).toEqual({ ignored: "not one of Lisa's pull requests" });
  });

  it("gives the same key to the same comment redelivered and another to another comment", () => {
    const keyOf = (payload: ReviewCommentPayload) => (onPullRequestReviewComment(payload) as { key: string }).key;
    const other = inline("/lisa redirect x");
    other.comment.id = 284312631;
    expect(keyOf(inline("/lisa redirect x"))).toBe(keyOf(inline("/lisa redirect x")));
    expect(keyOf(other)).not.toBe(keyOf(inline("/lisa redirect x")));
  });
});
