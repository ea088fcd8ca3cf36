import type { LongWait } from "./write-pacer.ts";

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

/** A pull request that was found or opened for a branch. */
export type EnsuredPullRequest = PullRequestRef & { state: "open" | "closed"; merged: boolean; draft: boolean; created: boolean };

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

/** How a pull request is merged: a merge commit, one squashed commit, or its commits rebased onto the base. */
export type MergeMethod = "merge" | "squash" | "rebase";

/** What came of a merge: merged, or GitHub's refusal (its status and message). */
export type MergeResult = { merged: true; message: string } | { merged: false; status: number; message: string };

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

/** A check run of another App (CI) on a commit; the newest of each name. */
export interface CiCheckRun {
  id: number;
  name: string;
  appId: number | null;
  status: string;
  conclusion: string | null;
  title: string | null;
  summary: string | null;
  text: string | null;
  detailsUrl: string | null;
  startedAt: string | null;
}

/** A check suite of another App on a commit; the gate counts its runs, never the suite (most stay empty for good). */
export interface CiSuite {
  id: number;
  appId: number | null;
  status: string | null;
  runs: number;
  createdAt: string | null;
}

/** A commit status of an external CI, the newest of its context. */
export interface CiStatus {
  context: string;
  state: string;
  description: string | null;
  targetUrl: string | null;
  createdAt: string;
}

/** What reports on a commit besides Lisa: its CI. */
export interface CiSnapshot {
  runs: CiCheckRun[];
  suites: CiSuite[];
  statuses: CiStatus[];
}

/**
 * What Lisa reads of GitHub, for one installation: every layer that decides takes this half of the
 * port. The core depends on this small object of functions, never on Probot, so it can be driven by
 * a fake or the real API alike. A request GitHub fails or never answers rejects with a `GitHubError`.
 * Writes are the other half (`github-publisher.ts`), which only `src/publication` may take.
 */
export interface GitHubReader {
  installationToken(): Promise<string>;
  /**
   * Parsed `.github/lisa.yml` from the default branch; null when there is none. With `since`, a
   * copy read at or after that moment is as current as a read now, and no request is sent for it.
   */
  readConfig(ref: RepoRef, options?: { since?: number }): Promise<unknown>;
  defaultBranch(ref: RepoRef): Promise<string>;
  /** The collaborator's role name: admin, maintain, write, triage, read, or none. */
  roleOf(ref: RepoRef, username: string): Promise<string>;
  findComment(ref: RepoRef, issue: number, marker: string): Promise<number | undefined>;
  /** The names of the labels on an issue or pull request. */
  labelsOf(ref: RepoRef, issue: number): Promise<string[]>;
  getPullRequest(ref: RepoRef, number: number): Promise<PullRequestState>;
  listReviews(ref: RepoRef, number: number): Promise<ReviewRecord[]>;
  /** Inline comments of one review. */
  listReviewComments(ref: RepoRef, number: number, reviewId: number): Promise<ReviewComment[]>;
  /** Inline comments of a pull request, those updated at or after `since` when given. */
  listPullComments(ref: RepoRef, number: number, since?: string): Promise<ReviewComment[]>;
  /** GitHub's own review decision (required approvals, code owners); null when the base branch has no review rule. */
  reviewDecision(ref: RepoRef, number: number): Promise<string | null>;
  /**
   * How many approvals the rules on `branch` ask of a pull request into it (the highest `pull_request`
   * rule's count); undefined when none asks, or GitHub will not say (404, 403).
   */
  requiredApprovals(ref: RepoRef, branch: string): Promise<number | undefined>;
  /** The newest check run named `name` on commit `sha` of this App, if any. */
  findCheckRun(ref: RepoRef, sha: string, name: string): Promise<{ id: number; status: string } | undefined>;
  /** The CI on commit `sha`: check runs and suites of Apps other than Lisa, and commit statuses. */
  ciOf(ref: RepoRef, sha: string): Promise<CiSnapshot>;
  /** A check run's annotations as `path:line: message` lines, at most `max`. */
  checkAnnotations(ref: RepoRef, checkRunId: number, max: number): Promise<string[]>;
  /** The log of the GitHub Actions job behind a check run; undefined when GitHub has none to give (expired, not Actions). */
  jobLog(ref: RepoRef, checkRunId: number): Promise<string | undefined>;
  /** The checks branch protection requires on `branch`; empty when it names none. */
  requiredChecks(ref: RepoRef, branch: string): Promise<string[]>;
  /** The merge methods the repository allows, in GitHub's order of them (merge commit, squash, rebase). */
  mergeMethods(ref: RepoRef): Promise<MergeMethod[]>;
  /** Told when one of this port's writes waits long on GitHub's content limits; absent where writes are not paced. */
  onWriteWait?(listener: (wait: LongWait) => void): void;
}
