/**
 * The emulator's memory: repositories with their collaborators, labels, issues, pull requests,
 * comments, reactions and reviews. Plain records; the JSON GitHub shows of them is built in
 * `representations.ts`, and the git side of a repository lives in its bare repository on disk.
 */

import type { CommitInfo } from "./git-repos.ts";

export type Role = "admin" | "maintain" | "write" | "triage" | "read";
export type AccountType = "User" | "Bot" | "Organization";
export type ReviewState = "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED";
/** A review's state as the API shows it: a dismissed review keeps its record but counts for nothing. */
export type ShownReviewState = ReviewState | "DISMISSED";

export interface Account {
  login: string;
  id: number;
  type: AccountType;
}

export interface Label {
  id: number;
  name: string;
  color: string;
}

export interface Reaction {
  id: number;
  content: string;
  user: Account;
  createdAt: string;
}

export interface Review {
  id: number;
  state: ShownReviewState;
  body: string;
  user: Account;
  submittedAt: string;
  /** The head the reviewer saw, fixed at submission: a later push does not move it. */
  commitId: string;
}

/** An inline comment on a line of a pull request's diff, in a review or a reply in its thread. */
export interface ReviewComment {
  id: number;
  reviewId: number | null;
  pullNumber: number;
  path: string;
  line: number;
  body: string;
  user: Account;
  commitId: string;
  diffHunk: string;
  inReplyTo: number | null;
  reactions: Reaction[];
  createdAt: string;
  updatedAt: string;
}

/** What a pull request adds to its issue. */
export interface PullFields {
  id: number;
  head: string;
  base: string;
  draft: boolean;
  /** Last commits seen on the branches; kept so a PR still shows them after a branch is deleted. */
  headSha: string;
  /** A commit on the head branch the PR does not show yet (EmulatorContext.headLagMs), and from when it will. */
  nextHead?: { sha: string; at: number } | undefined;
  baseSha: string;
  reviews: Review[];
  merged: boolean;
  mergedAt: string | null;
  /** Who merged it, once merged. */
  mergedBy?: Account;
  /** What it changes, as last seen (`pullView` counts it). */
  stats?: { commits: number; additions: number; deletions: number; changedFiles: number };
  mergeCommitSha: string | null;
  requestedReviewers: Account[];
}

/** An issue or, with `pull`, a pull request: GitHub numbers both in one sequence per repository. */
export interface Issue {
  id: number;
  number: number;
  title: string;
  body: string | null;
  user: Account;
  /** Names of the repository labels on the issue, in the order they were added. */
  labels: string[];
  state: "open" | "closed";
  /** Why an issue was closed, as GitHub's `state_reason` says it; unset while it never was. */
  stateReason?: "completed" | "not_planned" | "reopened";
  reactions: Reaction[];
  pull?: PullFields;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
}

export interface Comment {
  id: number;
  issueNumber: number;
  body: string;
  user: Account;
  createdAt: string;
  updatedAt: string;
  reactions?: Reaction[];
}

/** A check run an app reported on a commit (the checks API). */
export interface CheckRun {
  id: number;
  /** The App that created it. */
  appId: number;
  name: string;
  headSha: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  detailsUrl: string | null;
  output: { title: string | null; summary: string | null; text?: string | null };
  startedAt: string;
  completedAt: string | null;
  /** The suite it belongs to, for runs the emulator's CI reports. */
  suiteId?: number;
  annotations?: CheckAnnotation[];
  /** The job's log, for runs the emulator's CI reports as GitHub Actions. */
  log?: string;
}

/** A line a check run points at (`GET /check-runs/{id}/annotations`). */
export interface CheckAnnotation {
  path: string;
  line: number;
  level: "notice" | "warning" | "failure";
  message: string;
}

/** The suite GitHub creates for an App's checks on a pushed commit. */
export interface CheckSuite {
  id: number;
  appId: number;
  headSha: string;
  headBranch: string;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  createdAt: string;
  headCommit: CommitInfo;
}

/** A commit status an external CI reported (`POST /statuses/{sha}`). */
export interface CommitStatus {
  id: number;
  sha: string;
  context: string;
  state: "pending" | "success" | "failure" | "error";
  description: string | null;
  targetUrl: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * A check the emulator's CI runs on every commit pushed to the repository: it passes unless
 * `failsWhile` holds at that commit, and reports after `delayMs` (never, when `stuck`).
 */
export interface CiCheck {
  name: string;
  /** A GitHub Actions check run (default), or a commit status of an external CI. */
  as?: "check_run" | "status";
  /** Fails while `file` contains `text` (each line holding it is an annotation). */
  failsWhile?: { file: string; text: string };
  /** What the failing job prints before Lisa's annotations (the test's own log lines). */
  log?: string;
  delayMs?: number;
  stuck?: boolean;
  /** The check appears only this long after the push, as a workflow the pull request triggers does (default: at push time). */
  appearsAfterMs?: number;
}

export interface Repo {
  id: number;
  owner: Account;
  name: string;
  fullName: string;
  description: string | null;
  private: boolean;
  defaultBranch: string;
  /** Path of the bare repository. */
  gitDir: string;
  /** Keyed by lower-case login; GitHub logins are case-insensitive. */
  collaborators: Map<string, { login: string; role: Role }>;
  /** Keyed by lower-case name; GitHub label names are case-insensitive. */
  labels: Map<string, Label>;
  issues: Map<number, Issue>;
  comments: Map<number, Comment>;
  reviewComments: Map<number, ReviewComment>;
  checkRuns: Map<number, CheckRun>;
  checkSuites: Map<number, CheckSuite>;
  statuses: CommitStatus[];
  /** The checks the emulator's CI runs on each push, and the commits it has run them on. */
  ci: CiCheck[];
  ciRan: Set<string>;
  /** Checks branch protection requires on the default branch (`required_status_checks.contexts`). */
  requiredChecks: string[] | undefined;
  /** Checks a ruleset requires on the default branch (a `required_status_checks` rule). */
  rulesetChecks: string[] | undefined;
  /** False: the plan refuses draft pull requests (a private repository on GitHub Free). */
  draftPullRequests: boolean;
  /** A branch rule on the default branch requiring this many approvals, for GraphQL's `reviewDecision`. */
  requiredApprovals: number | undefined;
  /** The merge methods the repository allows (its settings' "Allow merge commits", squash, rebase). */
  mergeMethods: readonly ("merge" | "squash" | "rebase")[];
  nextNumber: number;
  createdAt: string;
}

export type PullRequest = Issue & { pull: PullFields };

export const isPull = (issue: Issue): issue is PullRequest => issue.pull !== undefined;

export const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

/** Label colours GitHub picks from when a label is created by adding it to an issue. */
const COLORS = ["d73a4a", "0075ca", "a2eeef", "7057ff", "008672", "e4e669", "d876e3", "cfd3d7"];

export class EmulatorState {
  readonly repos = new Map<string, Repo>();
  readonly #accounts = new Map<string, Account>();
  #lastId = 1000;

  /** One id sequence for every kind of object: ids only need to be unique, as on GitHub. */
  nextId(): number {
    this.#lastId += 1;
    return this.#lastId;
  }

  /** The account with this login, made on first sight; `name[bot]` logins are bots, like GitHub Apps'. */
  account(login: string, type?: AccountType): Account {
    const key = login.toLowerCase();
    let account = this.#accounts.get(key);
    if (!account) {
      account = { login, id: this.nextId(), type: type ?? (login.endsWith("[bot]") ? "Bot" : "User") };
      this.#accounts.set(key, account);
    }
    return account;
  }

  findRepo(owner: string, name: string): Repo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  addRepo(repo: Repo): void {
    this.repos.set(repo.fullName.toLowerCase(), repo);
  }

  /** The repository label with this name, created (as GitHub does when an issue is given a new label). */
  label(repo: Repo, name: string): Label {
    const key = name.toLowerCase();
    let label = repo.labels.get(key);
    if (!label) {
      label = { id: this.nextId(), name, color: COLORS[repo.labels.size % COLORS.length] ?? "ededed" };
      repo.labels.set(key, label);
    }
    return label;
  }
}
