import type { Octokit } from "@octokit/rest";
import { type ConfigFileCache, type ConfigFileRef, type ConfigFileText, resolveConfig } from "../config/resolve-config.ts";
import { ConfigError } from "../errors.ts";
import { GITHUB_BODY_LIMIT } from "../markdown/sanitize-markdown.ts";
import { cutMarkdown } from "../reporting/fit-to-limit.ts";
import { asGitHubError } from "./github-error.ts";
import type { LongWait } from "./write-pacer.ts";

const STANDARD_ROLES: ReadonlySet<string> = new Set(["admin", "maintain", "write", "triage", "read"]);

export interface RepoRef {
  owner: string;
  repo: string;
}

/** `owner/name` as a reference; the config schema has already checked the shape. */
export function parseRepoRef(fullName: string): RepoRef {
  const [owner = "", repo = ""] = fullName.split("/");
  return { owner, repo };
}

export interface PullRequestRef {
  number: number;
  url: string;
}

/** What Lisa reads of a pull request to decide its gate and whether it may push. */
export interface PullRequestState extends PullRequestRef {
  state: "open" | "closed";
  merged: boolean;
  draft: boolean;
  headSha: string;
  headRef: string;
  baseRef: string;
  /** GraphQL id, for the draft mutations REST cannot do. */
  nodeId: string;
  title: string;
  body: string;
}

/** A submitted review, as the gate needs it. */
export interface ReviewRecord {
  id: number;
  user: string;
  userType: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING";
  commitId: string | null;
  submittedAt: string | null;
  body: string;
  url: string;
}

/** An inline review comment (on a line of the diff). */
export interface ReviewComment {
  id: number;
  reviewId: number | null;
  user: string;
  userType: string;
  body: string;
  path: string;
  line: number | null;
  originalLine: number | null;
  diffHunk: string;
  commitId: string;
  originalCommitId: string;
  inReplyTo: number | null;
  createdAt: string;
  updatedAt: string;
  url: string;
}

/** What a check run says: in progress, or completed with a conclusion; a title and a Markdown summary. */
export interface CheckReport {
  conclusion?: "success" | "failure" | "neutral" | "cancelled";
  title: string;
  summary: string;
  detailsUrl?: string;
}

/**
 * The GitHub operations Lisa's core needs, for one installation. The core depends on this small
 * object of functions, never on Probot, so it can be driven by a fake or the real API alike. A
 * request GitHub fails or never answers rejects with a `GitHubError`.
 */
export interface GitHubPort {
  installationToken(): Promise<string>;
  /** Parsed `.github/lisa.yml` from the default branch; null when there is none. */
  readConfig(ref: RepoRef): Promise<unknown>;
  defaultBranch(ref: RepoRef): Promise<string>;
  /** The collaborator's role name: admin, maintain, write, triage, read, or none. */
  roleOf(ref: RepoRef, username: string): Promise<string>;
  addReaction(ref: RepoRef, issue: number, content: "eyes" | "rocket"): Promise<void>;
  findComment(ref: RepoRef, issue: number, marker: string): Promise<number | undefined>;
  createComment(ref: RepoRef, issue: number, body: string): Promise<number>;
  updateComment(ref: RepoRef, commentId: number, body: string): Promise<void>;
  /** The names of the labels on an issue or pull request. */
  labelsOf(ref: RepoRef, issue: number): Promise<string[]>;
  addLabels(ref: RepoRef, issue: number, labels: string[]): Promise<void>;
  /** Replaces all the labels of an issue: one write where adding one and removing another takes two. */
  setLabels(ref: RepoRef, issue: number, labels: string[]): Promise<void>;
  removeLabel(ref: RepoRef, issue: number, label: string): Promise<void>;
  /** The newest pull request from `branch` into `base`, open or not: a PR a human closed is never opened again. */
  findPullRequest(ref: RepoRef, branch: string, base: string): Promise<PullRequestState | undefined>;
  /** Opens a pull request; `draft` is a wish the repository may refuse (422), and the result says what it got. */
  createPullRequest(
    ref: RepoRef,
    pr: { title: string; body: string; head: string; base: string; draft?: boolean },
  ): Promise<PullRequestRef & { draft: boolean }>;
  updatePullRequest(ref: RepoRef, number: number, pr: { title?: string; body?: string }): Promise<void>;
  getPullRequest(ref: RepoRef, number: number): Promise<PullRequestState>;
  listReviews(ref: RepoRef, number: number): Promise<ReviewRecord[]>;
  /** Inline comments of one review. */
  listReviewComments(ref: RepoRef, number: number, reviewId: number): Promise<ReviewComment[]>;
  /** Inline comments of a pull request, those updated at or after `since` when given. */
  listPullComments(ref: RepoRef, number: number, since?: string): Promise<ReviewComment[]>;
  /** Answers in the thread of an inline comment. */
  replyToReviewComment(ref: RepoRef, number: number, commentId: number, body: string): Promise<number>;
  addCommentReaction(ref: RepoRef, commentId: number, kind: "issue" | "review", content: "eyes" | "rocket" | "+1"): Promise<void>;
  requestReviewers(ref: RepoRef, number: number, logins: string[]): Promise<void>;
  /** Marks a pull request ready for review, or turns it back into a draft (GraphQL: REST cannot). */
  setDraft(nodeId: string, draft: boolean): Promise<void>;
  /** GitHub's own review decision (required approvals, code owners); null when the base branch has no review rule. */
  reviewDecision(ref: RepoRef, number: number): Promise<string | null>;
  /** The newest check run named `name` on commit `sha`, if any. */
  findCheckRun(ref: RepoRef, sha: string, name: string): Promise<{ id: number; status: string } | undefined>;
  /** A check run on `sha`: in progress without a conclusion, completed with one. */
  createCheckRun(ref: RepoRef, sha: string, name: string, report: CheckReport): Promise<number>;
  updateCheckRun(ref: RepoRef, id: number, report: CheckReport): Promise<void>;
  /** Merges exactly `sha`; GitHub refuses (405, 409) when it is not mergeable or the head moved. */
  mergePullRequest(ref: RepoRef, number: number, sha: string): Promise<{ merged: boolean; message: string }>;
  /** Told when one of this port's writes waits long on GitHub's content limits; absent where writes are not paced. */
  onWriteWait?(listener: (wait: LongWait) => void): void;
}

/**
 * The GitHub port over an installation-authenticated Octokit, and a function that mints a fresh
 * installation token for git. With `configCache`, config files are read conditionally (config-cache.ts).
 */
export function createGitHubPort(
  octokit: Octokit,
  mintToken: () => Promise<string>,
  { self, configCache }: { self?: string; configCache?: ConfigFileCache } = {},
): GitHubPort {
  // Lisa's own comments: an App's are a bot's, and no person can write as one; with a person's
  // token (`lisa run`), they are that person's, and only theirs count.
  const isMine = (user: { type?: string; login?: string } | null | undefined) =>
    self === undefined ? user?.type === "Bot" : user?.login?.toLowerCase() === self.toLowerCase();
  return throwingGitHubErrors({
    installationToken: mintToken,
    readConfig: (ref) => resolveConfig((file, etag) => readConfigFile(octokit, file, etag), ref, configCache),
    async defaultBranch({ owner, repo }) {
      const { data } = await octokit.rest.repos.get({ owner, repo });
      return data.default_branch;
    },
    async roleOf({ owner, repo }, username) {
      try {
        const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username });
        // `permission` folds maintain into write and triage into read; `role_name` does not, but a
        // custom role has its own name there, and then `permission` tells what it inherits.
        return data.role_name && STANDARD_ROLES.has(data.role_name) ? data.role_name : data.permission;
      } catch (error) {
        if (statusOf(error) === 404) return "none";
        throw error;
      }
    },
    async addReaction({ owner, repo }, issue, content) {
      await octokit.rest.reactions.createForIssue({ owner, repo, issue_number: issue, content });
    },
    async findComment({ owner, repo }, issue, marker) {
      for await (const { data } of octokit.paginate.iterator(octokit.rest.issues.listComments, {
        owner,
        repo,
        issue_number: issue,
        per_page: 100,
      })) {
        const found = data.find((comment) => comment.body?.includes(marker) && isMine(comment.user));
        if (found) return found.id;
      }
      return undefined;
    },
    async createComment({ owner, repo }, issue, body) {
      const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: issue, body: fit(body) });
      return data.id;
    },
    async updateComment({ owner, repo }, commentId, body) {
      await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body: fit(body) });
    },
    async findCheckRun({ owner, repo }, sha, name) {
      const { data } = await octokit.rest.checks.listForRef({ owner, repo, ref: sha, check_name: name, per_page: 1 });
      const [found] = data.check_runs;
      return found ? { id: found.id, status: found.status } : undefined;
    },
    async createCheckRun({ owner, repo }, sha, name, report) {
      const { data } = await octokit.rest.checks.create({ owner, repo, name, head_sha: sha, ...checkFields(report) });
      return data.id;
    },
    async updateCheckRun({ owner, repo }, id, report) {
      await octokit.rest.checks.update({ owner, repo, check_run_id: id, ...checkFields(report) });
    },
    async labelsOf({ owner, repo }, issue) {
      const { data } = await octokit.rest.issues.listLabelsOnIssue({ owner, repo, issue_number: issue, per_page: 100 });
      return data.map((label) => label.name);
    },
    async addLabels({ owner, repo }, issue, labels) {
      await octokit.rest.issues.addLabels({ owner, repo, issue_number: issue, labels });
    },
    async setLabels({ owner, repo }, issue, labels) {
      await octokit.rest.issues.setLabels({ owner, repo, issue_number: issue, labels });
    },
    async removeLabel({ owner, repo }, issue, name) {
      try {
        await octokit.rest.issues.removeLabel({ owner, repo, issue_number: issue, name });
      } catch (error) {
        if (statusOf(error) !== 404) throw error;
      }
    },
    async findPullRequest({ owner, repo }, branch, base) {
      const { data } = await octokit.rest.pulls.list({
        owner,
        repo,
        head: `${owner}:${branch}`,
        base,
        state: "all",
        per_page: 10,
      });
      const pr = data.sort((a, b) => b.number - a.number)[0];
      return pr ? pullState(pr) : undefined;
    },
    async createPullRequest({ owner, repo }, pr) {
      try {
        const { data } = await octokit.rest.pulls.create({ owner, repo, ...pr, body: fit(pr.body) });
        return { number: data.number, url: data.html_url, draft: data.draft ?? false };
      } catch (error) {
        // Drafts need a paid plan on private repositories; GitHub answers 422 and Lisa opens a normal PR.
        if (!pr.draft || statusOf(error) !== 422 || !/draft/i.test((error as Error).message)) throw error;
        const { data } = await octokit.rest.pulls.create({ owner, repo, ...pr, body: fit(pr.body), draft: false });
        return { number: data.number, url: data.html_url, draft: false };
      }
    },
    async updatePullRequest({ owner, repo }, number, pr) {
      await octokit.rest.pulls.update({
        owner,
        repo,
        pull_number: number,
        ...pr,
        ...(pr.body === undefined ? {} : { body: fit(pr.body) }),
      });
    },
    async getPullRequest({ owner, repo }, number) {
      const { data } = await octokit.rest.pulls.get({ owner, repo, pull_number: number });
      return pullState(data);
    },
    async listReviews({ owner, repo }, number) {
      const reviews = await octokit.paginate(octokit.rest.pulls.listReviews, { owner, repo, pull_number: number, per_page: 100 });
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
      const comments = await octokit.paginate(octokit.rest.pulls.listCommentsForReview, {
        owner,
        repo,
        pull_number: number,
        review_id: reviewId,
        per_page: 100,
      });
      return comments.map((comment) => reviewComment({ ...comment, pull_request_review_id: reviewId }));
    },
    async listPullComments({ owner, repo }, number, since) {
      const comments = await octokit.paginate(octokit.rest.pulls.listReviewComments, {
        owner,
        repo,
        pull_number: number,
        per_page: 100,
        ...(since ? { since } : {}),
      });
      return comments.map(reviewComment);
    },
    async replyToReviewComment({ owner, repo }, number, commentId, body) {
      const { data } = await octokit.rest.pulls.createReplyForReviewComment({
        owner,
        repo,
        pull_number: number,
        comment_id: commentId,
        body: fit(body),
      });
      return data.id;
    },
    async addCommentReaction({ owner, repo }, commentId, kind, content) {
      if (kind === "issue") await octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: commentId, content });
      else await octokit.rest.reactions.createForPullRequestReviewComment({ owner, repo, comment_id: commentId, content });
    },
    async requestReviewers({ owner, repo }, number, logins) {
      // With a person's token the pull request is theirs, and GitHub refuses to ask its author.
      const reviewers = logins.filter((login) => login.toLowerCase() !== self?.toLowerCase());
      if (reviewers.length > 0) await octokit.rest.pulls.requestReviewers({ owner, repo, pull_number: number, reviewers });
    },
    async setDraft(nodeId, draft) {
      const mutation = draft
        ? "mutation($id: ID!) { convertPullRequestToDraft(input: {pullRequestId: $id}) { pullRequest { isDraft } } }"
        : "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { isDraft } } }";
      await octokit.graphql(mutation, { id: nodeId });
    },
    async reviewDecision({ owner, repo }, number) {
      const data = await octokit.graphql<{ repository: { pullRequest: { reviewDecision: string | null } | null } }>(
        "query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, name: $name) { pullRequest(number: $number) { reviewDecision } } }",
        { owner, name: repo, number },
      );
      return data.repository.pullRequest?.reviewDecision ?? null;
    },
    async mergePullRequest({ owner, repo }, number, sha) {
      try {
        const { data } = await octokit.rest.pulls.merge({ owner, repo, pull_number: number, sha });
        return { merged: data.merged, message: data.message };
      } catch (error) {
        const status = statusOf(error);
        if (status === 405 || status === 409) return { merged: false, message: (error as Error).message };
        throw error;
      }
    },
  });
}

/** The port whose every method turns Octokit's report of a failed request into a GitHubError on its way out. */
function throwingGitHubErrors(port: GitHubPort): GitHubPort {
  const wrapped = Object.entries(port).map(([name, method]: [string, (...args: unknown[]) => Promise<unknown>]) => [
    name,
    async (...args: unknown[]) => {
      try {
        return await method(...args);
      } catch (error) {
        throw asGitHubError(error) ?? error;
      }
    },
  ]);
  return Object.fromEntries(wrapped) as GitHubPort;
}

/** A config file's text from the default branch, asked for with `If-None-Match` when an ETag is held. */
async function readConfigFile(octokit: Octokit, file: ConfigFileRef, etag: string | null): Promise<ConfigFileText | "unchanged"> {
  try {
    const { data, headers } = await octokit.request("GET /repos/{owner}/{repo}/contents/{path}", {
      ...file,
      mediaType: { format: "raw" },
      headers: etag === null ? {} : { "if-none-match": etag },
    });
    // Asked for raw, a file is text; a directory or a submodule comes back as JSON.
    if (typeof data !== "string") throw new ConfigError(`\`${file.owner}/${file.repo}:${file.path}\` is not a file`);
    return { etag: headers.etag ?? null, content: data };
  } catch (error) {
    const status = statusOf(error);
    if (status === 304) return "unchanged";
    if (status === 404) return { etag: null, content: null };
    throw error;
  }
}

/** The HTTP status of a failed request inside a port method (0: no answer), undefined for any other error. */
const statusOf = (error: unknown) => asGitHubError(error)?.status;

interface PullJson {
  number: number;
  html_url: string;
  state: string;
  merged?: boolean | null;
  merged_at?: string | null;
  draft?: boolean;
  node_id: string;
  title: string;
  body?: string | null;
  head: { sha: string; ref: string };
  base: { ref: string };
}

/**
 * Every body Lisa writes fits GitHub's limit: the renderers fit their own, and this cuts anything
 * else (a reply quoting a long command, say) with a note, rather than have GitHub refuse the write.
 */
const CHECK_SUMMARY_LIMIT = 65_535;
const fit = (body: string) => cutMarkdown(body, GITHUB_BODY_LIMIT);

function pullState(pr: PullJson): PullRequestState {
  return {
    number: pr.number,
    url: pr.html_url,
    state: pr.state === "closed" ? "closed" : "open",
    merged: Boolean(pr.merged ?? pr.merged_at),
    draft: pr.draft ?? false,
    headSha: pr.head.sha,
    headRef: pr.head.ref,
    baseRef: pr.base.ref,
    nodeId: pr.node_id,
    title: pr.title,
    body: pr.body ?? "",
  };
}

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

/** The checks API's fields for a report: a conclusion completes the run, its absence keeps it in progress. */
function checkFields(report: CheckReport) {
  return {
    ...(report.conclusion ? { status: "completed" as const, conclusion: report.conclusion } : { status: "in_progress" as const }),
    ...(report.detailsUrl ? { details_url: report.detailsUrl } : {}),
    // The checks API bounds a summary one character below a comment's body.
    output: { title: report.title, summary: cutMarkdown(report.summary, CHECK_SUMMARY_LIMIT) },
  };
}
