import {
  type Account,
  type Comment,
  type Issue,
  isPull,
  type Label,
  type PullRequest,
  type Repo,
  type Review,
  type ReviewComment,
} from "./state.ts";

/**
 * The JSON GitHub shows of each record, shared by the REST answers and the webhook payloads so the
 * two never disagree. Fields are the ones apps commonly read, not GitHub's full objects.
 */

export interface Links {
  /** The emulator's URL: the REST API and the `html_url`s both live there. */
  base: string;
  /** Where git serves `<owner>/<name>.git` over HTTP. */
  git: string;
}

export function accountJson(account: Account, links: Links) {
  return {
    login: account.login,
    id: account.id,
    node_id: nodeId(account.type, account.id),
    type: account.type,
    site_admin: false,
    url: `${links.base}/users/${encodeURIComponent(account.login)}`,
    html_url: `${links.base}/${encodeURIComponent(account.login)}`,
  };
}

export function repoJson(repo: Repo, links: Links) {
  return {
    id: repo.id,
    node_id: nodeId("Repository", repo.id),
    name: repo.name,
    full_name: repo.fullName,
    private: repo.private,
    visibility: repo.private ? "private" : "public",
    owner: accountJson(repo.owner, links),
    description: repo.description,
    fork: false,
    archived: false,
    disabled: false,
    default_branch: repo.defaultBranch,
    allow_merge_commit: repo.mergeMethods.includes("merge"),
    allow_squash_merge: repo.mergeMethods.includes("squash"),
    allow_rebase_merge: repo.mergeMethods.includes("rebase"),
    url: `${links.base}/repos/${repo.fullName}`,
    html_url: `${links.base}/${repo.fullName}`,
    clone_url: `${links.git}/${repo.fullName}.git`,
    created_at: repo.createdAt,
  };
}

export function labelJson(repo: Repo, label: Label, links: Links) {
  return {
    id: label.id,
    node_id: nodeId("Label", label.id),
    url: `${links.base}/repos/${repo.fullName}/labels/${encodeURIComponent(label.name)}`,
    name: label.name,
    color: label.color,
    default: false,
    description: null,
  };
}

function issueLabels(repo: Repo, issue: Issue, links: Links) {
  return issue.labels.flatMap((name) => {
    const label = repo.labels.get(name.toLowerCase());
    return label ? [labelJson(repo, label, links)] : [];
  });
}

/** An issue as the issues API and `issues`/`issue_comment` payloads show it; pull requests carry `pull_request`. */
export function issueJson(repo: Repo, issue: Issue, links: Links) {
  const api = `${links.base}/repos/${repo.fullName}`;
  return {
    id: issue.id,
    node_id: nodeId(isPull(issue) ? "PullRequest" : "Issue", issue.id),
    number: issue.number,
    title: issue.title,
    body: issue.body,
    user: accountJson(issue.user, links),
    labels: issueLabels(repo, issue, links),
    state: issue.state,
    state_reason: issue.stateReason ?? null,
    locked: false,
    comments: [...repo.comments.values()].filter((c) => c.issueNumber === issue.number).length,
    url: `${api}/issues/${issue.number}`,
    html_url: `${links.base}/${repo.fullName}/${isPull(issue) ? "pull" : "issues"}/${issue.number}`,
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    closed_at: issue.closedAt,
    author_association: association(repo, issue.user),
    ...(isPull(issue)
      ? {
          pull_request: {
            url: `${api}/pulls/${issue.number}`,
            html_url: `${links.base}/${repo.fullName}/pull/${issue.number}`,
            merged_at: issue.pull.mergedAt,
          },
        }
      : {}),
  };
}

export function commentJson(repo: Repo, comment: Comment, links: Links) {
  return {
    id: comment.id,
    node_id: nodeId("IssueComment", comment.id),
    body: comment.body,
    user: accountJson(comment.user, links),
    url: `${links.base}/repos/${repo.fullName}/issues/comments/${comment.id}`,
    html_url: `${links.base}/${repo.fullName}/issues/${comment.issueNumber}#issuecomment-${comment.id}`,
    issue_url: `${links.base}/repos/${repo.fullName}/issues/${comment.issueNumber}`,
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    author_association: association(repo, comment.user),
  };
}

/** A pull request as the pulls API and `pull_request*` payloads show it, with the branches' last-seen commits. */
export function pullJson(repo: Repo, pull: PullRequest, links: Links) {
  const branch = (ref: string, sha: string) => ({
    label: `${repo.owner.login}:${ref}`,
    ref,
    sha,
    user: accountJson(repo.owner, links),
    repo: repoJson(repo, links),
  });
  return {
    id: pull.pull.id,
    node_id: nodeId("PullRequest", pull.pull.id),
    number: pull.number,
    state: pull.state,
    locked: false,
    title: pull.title,
    body: pull.body,
    user: accountJson(pull.user, links),
    labels: issueLabels(repo, pull, links),
    draft: pull.pull.draft,
    merged: pull.pull.merged,
    merged_at: pull.pull.mergedAt,
    merge_commit_sha: pull.pull.mergeCommitSha,
    mergeable: pull.state === "open" ? true : null,
    mergeable_state: pull.state !== "open" ? "unknown" : pull.pull.draft ? "draft" : "clean",
    requested_reviewers: pull.pull.requestedReviewers.map((account) => accountJson(account, links)),
    url: `${links.base}/repos/${repo.fullName}/pulls/${pull.number}`,
    html_url: `${links.base}/${repo.fullName}/pull/${pull.number}`,
    issue_url: `${links.base}/repos/${repo.fullName}/issues/${pull.number}`,
    head: branch(pull.pull.head, pull.pull.headSha),
    base: branch(pull.pull.base, pull.pull.baseSha),
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
    closed_at: pull.closedAt,
    author_association: association(repo, pull.user),
  };
}

export function reviewJson(repo: Repo, pull: PullRequest, review: Review, links: Links) {
  return {
    id: review.id,
    node_id: nodeId("PullRequestReview", review.id),
    user: accountJson(review.user, links),
    body: review.body,
    state: review.state,
    commit_id: review.commitId,
    submitted_at: review.submittedAt,
    html_url: `${links.base}/${repo.fullName}/pull/${pull.number}#pullrequestreview-${review.id}`,
    pull_request_url: `${links.base}/repos/${repo.fullName}/pulls/${pull.number}`,
    author_association: association(repo, review.user),
  };
}

export function reviewCommentJson(repo: Repo, comment: ReviewComment, links: Links) {
  return {
    id: comment.id,
    node_id: nodeId("PullRequestReviewComment", comment.id),
    pull_request_review_id: comment.reviewId,
    in_reply_to_id: comment.inReplyTo ?? undefined,
    path: comment.path,
    line: comment.line,
    original_line: comment.line,
    side: "RIGHT",
    commit_id: comment.commitId,
    original_commit_id: comment.commitId,
    diff_hunk: comment.diffHunk,
    body: comment.body,
    user: accountJson(comment.user, links),
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    html_url: `${links.base}/${repo.fullName}/pull/${comment.pullNumber}#discussion_r${comment.id}`,
    pull_request_url: `${links.base}/repos/${repo.fullName}/pulls/${comment.pullNumber}`,
    url: `${links.base}/repos/${repo.fullName}/pulls/comments/${comment.id}`,
    author_association: association(repo, comment.user),
  };
}

export type IssueJson = ReturnType<typeof issueJson>;
export type CommentJson = ReturnType<typeof commentJson>;
export type PullJson = ReturnType<typeof pullJson>;
export type ReviewJson = ReturnType<typeof reviewJson>;

function association(repo: Repo, account: Account): string {
  if (account.login.toLowerCase() === repo.owner.login.toLowerCase()) return "OWNER";
  return repo.collaborators.has(account.login.toLowerCase()) ? "COLLABORATOR" : "NONE";
}

/** An opaque global node id in the spirit of GitHub's legacy ones. */
function nodeId(type: string, id: number): string {
  return Buffer.from(`${type}:${id}`).toString("base64").replace(/=+$/, "");
}
