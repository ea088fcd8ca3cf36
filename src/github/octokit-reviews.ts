import type { Octokit } from "@octokit/rest";
import { branchRules } from "./branch-rules.ts";
import { fitBody } from "./fit-body.ts";
import type { ReviewComment, ReviewRecord } from "./github-port.ts";
import type { GitHubPort } from "./github-publisher.ts";
import { readAllPages } from "./read-all-pages.ts";

type ReviewMethods =
  | "listReviews"
  | "listReviewComments"
  | "listPullComments"
  | "replyToReviewComment"
  | "requestReviewers"
  | "reviewDecision"
  | "requiredApprovals";

/** The port's reviews over Octokit: the reviews and inline comments of a pull request, and who is asked for one. */
export function octokitReviews(octokit: Octokit, self: string | undefined): Pick<GitHubPort, ReviewMethods> {
  return {
    async listReviews({ owner, repo }, number) {
      const reviews = await readAllPages(
        octokit,
        octokit.rest.pulls.listReviews,
        { owner, repo, pull_number: number },
        (page) => page,
      );
      return reviews.map((review) => ({
        id: review.id,
        user: review.user?.login ?? "",
        userType: review.user?.type ?? "User",
        state: review.state as ReviewRecord["state"],
        commitId: review.commit_id ?? null,
        submittedAt: review.submitted_at ?? null,
        body: review.body ?? "",
        url: review.html_url,
      }));
    },
    async listReviewComments({ owner, repo }, number, reviewId) {
      const comments = await readAllPages(
        octokit,
        octokit.rest.pulls.listCommentsForReview,
        { owner, repo, pull_number: number, review_id: reviewId },
        (page) => page,
      );
      return comments.map((comment) => reviewComment({ ...comment, pull_request_review_id: reviewId }));
    },
    async listPullComments({ owner, repo }, number, since) {
      const comments = await readAllPages(
        octokit,
        octokit.rest.pulls.listReviewComments,
        { owner, repo, pull_number: number, ...(since ? { since } : {}) },
        (page) => page,
      );
      return comments.map(reviewComment);
    },
    async replyToReviewComment({ owner, repo }, number, commentId, body) {
      const { data } = await octokit.rest.pulls.createReplyForReviewComment({
        owner,
        repo,
        pull_number: number,
        comment_id: commentId,
        body: fitBody(body),
      });
      return data.id;
    },
    async requestReviewers({ owner, repo }, number, logins) {
      // With a person's token the pull request is theirs, and GitHub refuses to ask its author.
      const reviewers = logins.filter((login) => login.toLowerCase() !== self?.toLowerCase());
      if (reviewers.length > 0) await octokit.rest.pulls.requestReviewers({ owner, repo, pull_number: number, reviewers });
    },
    async reviewDecision({ owner, repo }, number) {
      const data = await octokit.graphql<{ repository: { pullRequest: { reviewDecision: string | null } | null } }>(
        "query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { pullRequest(number: $number) { reviewDecision } } }",
        { owner, name: repo, number },
      );
      return data.repository.pullRequest?.reviewDecision ?? null;
    },
    async requiredApprovals(ref, branch) {
      const counts = (await branchRules(octokit, ref, branch))?.flatMap((rule) =>
        rule.type === "pull_request" ? [rule.parameters?.required_approving_review_count ?? 0] : [],
      );
      return counts?.length ? Math.max(...counts) : undefined;
    },
  };
}

/** What the pulls API answers for an inline comment that Lisa reads, from a review's list and a pull request's alike. */
interface ReviewCommentJson {
  id: number;
  pull_request_review_id?: number | null;
  user: { login: string; type?: string } | null;
  body: string;
  path: string;
  line?: number | null;
  original_line?: number | null;
  diff_hunk: string;
  commit_id: string;
  original_commit_id: string;
  in_reply_to_id?: number;
  created_at: string;
  updated_at: string;
  html_url: string;
}

function reviewComment(comment: ReviewCommentJson): ReviewComment {
  return {
    id: comment.id,
    reviewId: comment.pull_request_review_id ?? null,
    user: comment.user?.login ?? "",
    userType: comment.user?.type ?? "User",
    body: comment.body,
    path: comment.path,
    line: comment.line ?? null,
    originalLine: comment.original_line ?? null,
    diffHunk: comment.diff_hunk,
    commitId: comment.commit_id,
    originalCommitId: comment.original_commit_id,
    inReplyTo: comment.in_reply_to_id ?? null,
    createdAt: comment.created_at,
    updatedAt: comment.updated_at,
    url: comment.html_url,
  };
}
