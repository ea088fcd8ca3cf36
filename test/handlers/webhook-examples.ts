import type { onIssueClosedOrUnlabeled } from "../../src/handlers/on-issue-closed-or-unlabeled.ts";
import type { onIssueComment } from "../../src/handlers/on-issue-comment.ts";
import type { onIssueLabeled } from "../../src/handlers/on-issue-labeled.ts";
import type { onPullRequest } from "../../src/handlers/on-pull-request.ts";
import type { onPullRequestReview } from "../../src/handlers/on-pull-request-review.ts";
import type { onPullRequestReviewComment } from "../../src/handlers/on-pull-request-review-comment.ts";
import type { PullRequestPayloadPart } from "../../src/handlers/payload-filters.ts";

const { default: examples } = await import("@octokit/webhooks-examples/api.github.com/index.json", { with: { type: "json" } });

type Example = { action: string; installation?: { id: number } };

/**
 * A fresh copy of a real example payload from @octokit/webhooks-examples (GitHub's own samples for
 * the Codertocat/Hello-World repository), delivered to installation 2.
 */
function example(event: string, action: string): unknown {
  const all = (examples as { name: string; examples: Example[] }[]).find((e) => e.name === event)?.examples ?? [];
  // Prefer a sample delivered to an installation, as every webhook a GitHub App receives is.
  const found = all.find((e) => e.action === action && e.installation) ?? all.find((e) => e.action === action);
  if (!found) throw new Error(`no ${event}.${action} example in @octokit/webhooks-examples`);
  return { ...structuredClone(found), installation: { id: 2 } };
}

export type ReviewPayload = Parameters<typeof onPullRequestReview>[0];
export type ReviewCommentPayload = Parameters<typeof onPullRequestReviewComment>[0];
export type PullRequestPayload = Parameters<typeof onPullRequest>[0];
export type LabeledPayload = Parameters<typeof onIssueLabeled>[0];
export type CommentPayload = Parameters<typeof onIssueComment>[0];
export type IssueChangePayload = Parameters<typeof onIssueClosedOrUnlabeled>[0];

/** The example repository, and the branch that makes its pull request #2 one of Lisa's. */
export const OWNER = "Codertocat";
export const REPO = "Hello-World";
export const LISA_BRANCH = "lisa/1-x";

/** Makes the example's pull request one of Lisa's: a `lisa/` branch of the repository itself. */
function asLisas<T extends { repository: { full_name: string }; pull_request: PullRequestPayloadPart }>(payload: T): T {
  payload.pull_request.head.ref = LISA_BRANCH;
  payload.pull_request.head.repo = { ...payload.pull_request.head.repo, full_name: payload.repository.full_name };
  return payload;
}

/** `pull_request_review.submitted` (or `dismissed`, `edited`) on Lisa's PR #2. */
export function reviewPayload(action = "submitted"): ReviewPayload {
  // The samples have no `edited` review; a submitted one with its action changed is one.
  const payload = example("pull_request_review", action === "dismissed" ? "dismissed" : "submitted") as ReviewPayload;
  return asLisas({ ...payload, action });
}

/** `pull_request_review_comment.created` (or `edited`, `deleted`) on Lisa's PR #2. */
export function reviewCommentPayload(action = "created"): ReviewCommentPayload {
  return asLisas(example("pull_request_review_comment", action) as ReviewCommentPayload);
}

/** `pull_request.<action>` on Lisa's PR #2. */
export function pullRequestPayload(action: string): PullRequestPayload {
  return asLisas(example("pull_request", action) as PullRequestPayload);
}

/** The real `issues.labeled` sample: issue #1 of Codertocat/Hello-World labeled `bug`. */
export function labeledPayload(): LabeledPayload {
  return example("issues", "labeled") as LabeledPayload;
}

/** The real `issues.unlabeled` sample: label `bug` taken off issue #1 of Codertocat/Hello-World. */
export function unlabeledPayload(): IssueChangePayload {
  return example("issues", "unlabeled") as IssueChangePayload;
}

/**
 * `issues.closed` on issue #1. The samples have none, so the `reopened` one is turned back, as
 * GitHub's closed payload differs from it only in the action and the issue's state fields.
 */
export function closedPayload(): IssueChangePayload {
  const payload = example("issues", "reopened") as IssueChangePayload & {
    issue: { state: string; closed_at: string | null; state_reason?: string | null };
  };
  payload.issue.state = "closed";
  payload.issue.closed_at = payload.issue.updated_at ?? null;
  payload.issue.state_reason = "completed";
  return { ...payload, action: "closed" };
}

/** The real `issue_comment.<action>` sample on issue #1, with the body given. */
export function commentPayload(body: string, action = "created"): CommentPayload {
  const payload = example("issue_comment", action) as CommentPayload;
  payload.comment.body = body;
  return payload;
}
