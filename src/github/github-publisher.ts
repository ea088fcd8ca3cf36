import type { CheckReport, EnsuredPullRequest, GitHubReader, MergeMethod, MergeResult, RepoRef } from "./github-port.ts";
import type { Lane } from "./write-pacer.ts";

/**
 * What Lisa writes to GitHub, for one installation. Biome lets only `src/publication` (and the
 * wiring that builds ports) import this module, so the layers that decide read GitHub through
 * `GitHubReader` and change it by asking publication, which converges GitHub to what they decided.
 */
export interface GitHubPublisher {
  addReaction(ref: RepoRef, issue: number, content: "eyes" | "rocket"): Promise<void>;
  /** `lane`: where the write waits among the installation's (write-pacer.ts); by its kind otherwise. */
  createComment(ref: RepoRef, issue: number, body: string, lane?: Lane): Promise<number>;
  /** Resolves once this text, or a newer one of the same comment, is written (coalesced-edits.ts). */
  updateComment(ref: RepoRef, commentId: number, body: string): Promise<void>;
  addLabels(ref: RepoRef, issue: number, labels: string[]): Promise<void>;
  /** Replaces all the labels of an issue: one write where adding one and removing another takes two. */
  setLabels(ref: RepoRef, issue: number, labels: string[]): Promise<void>;
  removeLabel(ref: RepoRef, issue: number, label: string): Promise<void>;
  /** Closes an issue as completed, unless it is closed already (looked at first). Whether it was open. */
  ensureIssueClosed(ref: RepoRef, issue: number): Promise<boolean>;
  /**
   * The newest pull request from `pr.head` into `pr.base`, open or not (a PR a human closed is never
   * opened again), or one opened now (`created`) when there is none. `draft` is a wish the
   * repository may refuse (422), and the result says what it got.
   */
  ensurePullRequest(
    ref: RepoRef,
    pr: { title: string; body: string; head: string; base: string; draft?: boolean },
  ): Promise<EnsuredPullRequest>;
  updatePullRequest(ref: RepoRef, number: number, pr: { title?: string; body?: string }): Promise<void>;
  /** Answers in the thread of an inline comment. */
  replyToReviewComment(ref: RepoRef, number: number, commentId: number, body: string): Promise<number>;
  addCommentReaction(ref: RepoRef, commentId: number, kind: "issue" | "review", content: "eyes" | "rocket" | "+1"): Promise<void>;
  requestReviewers(ref: RepoRef, number: number, logins: string[]): Promise<void>;
  /** Marks a pull request ready for review, or turns it back into a draft (GraphQL: REST cannot). */
  setDraft(nodeId: string, draft: boolean): Promise<void>;
  /**
   * The check run named `name` on `sha` says `report` (in progress without a conclusion, completed
   * with one): the newest such run is updated, or one is created. Its id; none for a person's
   * token, which GitHub refuses check runs.
   */
  ensureCheckRun(ref: RepoRef, sha: string, name: string, report: CheckReport): Promise<number | undefined>;
  updateCheckRun(ref: RepoRef, id: number, report: CheckReport): Promise<void>;
  /** A new check run named `name` on `sha`, newer than any before it (a live session's); none for a person's token. */
  createCheckRun(ref: RepoRef, sha: string, name: string, report: CheckReport): Promise<number | undefined>;
  /**
   * Merges exactly `sha` by `method`. A refusal that asking again will not change is a result, not
   * an error: 405 (not mergeable, method disallowed, checks or reviews missing), 409 (the head
   * moved), 403 (a permission Lisa lacks, e.g. `workflows`), 422; it carries GitHub's status and words.
   */
  mergePullRequest(ref: RepoRef, number: number, sha: string, method: MergeMethod): Promise<MergeResult>;
}

/** The whole port, as `createGitHubPort` builds it: reads and writes of one installation. */
export type GitHubPort = GitHubReader & GitHubPublisher;

/**
 * The writing half of a port that the layers above handed down as a reader. Every port Lisa builds
 * has both halves (`createGitHubPort`); what keeps the rest of Lisa from writing is that only
 * publication may import this.
 */
export const publisherOf = (gh: GitHubReader): GitHubPublisher => gh as GitHubPort;
