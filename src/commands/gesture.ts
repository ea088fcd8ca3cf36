import type { ParsedCommand } from "./parse-command.ts";

/** Where a webhook happened: an installation's repository, and an issue or pull request in it. */
export interface GestureOrigin {
  installationId: number;
  owner: string;
  repo: string;
  /** The issue or pull request number. */
  number: number;
  isPullRequest: boolean;
  sender: string;
}

/**
 * A `/lisa` command from an issue or PR comment, a review body, or an inline review comment. The
 * command wins over a review's state: an approval whose body says `/lisa redirect …` is a redirect.
 */
export interface CommandGesture extends GestureOrigin {
  kind: "command";
  command: ParsedCommand;
  where: "comment" | "review" | "inline";
  /** The comment or review comment carrying the command, for the 👀 reaction and thread replies. */
  commentId: number | null;
  reviewId: number | null;
  url: string | null;
  /** When the text was written: content edited after this is not used (it was not what was asked). */
  createdAt: string;
  /** For an inline command: where in the diff it was said. */
  inline?: { path: string; line: number | null; diffHunk: string; inReplyTo: number | null; outdated: boolean };
}

/** A review's decision, without a command in its body. */
export interface ReviewGesture extends GestureOrigin {
  kind: "review";
  action: "submitted" | "dismissed";
  state: "approved" | "changes_requested" | "commented" | "dismissed";
  reviewId: number;
  commitId: string | null;
  body: string;
  url: string | null;
  /** A dismissed review's author (the sender is who dismissed it). */
  reviewer?: string;
}

/** A pull request closed, merged, reopened, or pushed to by a human. */
export interface PullRequestGesture extends GestureOrigin {
  kind: "pull_request";
  action: "closed" | "reopened" | "synchronize";
  merged: boolean;
  before: string | null;
  after: string | null;
}

/** The issue itself: its Lisa label taken off, or the issue closed (docs/operations.md). */
export interface IssueGesture extends GestureOrigin {
  kind: "issue";
  action: "unlabeled" | "closed";
  /** The label taken off; null for a close. */
  label: string | null;
}

/** "Re-run" pressed on Lisa's check run (or "Re-run all" on her check suite) at a head of one of her pull requests. */
export interface CheckGesture extends GestureOrigin {
  kind: "check";
  action: "rerequested";
  headSha: string;
  /** The check run pressed; null for a suite, whose newest Lisa check run at the head is meant. */
  checkRunId: number | null;
  /** What the pressed check run says now, kept when Lisa adds why she does not re-run it. */
  shown: { conclusion: string | null; title: string | null; summary: string | null } | null;
}

export type Gesture = CommandGesture | ReviewGesture | PullRequestGesture | IssueGesture | CheckGesture;

/** What Lisa keeps of an `issues.labeled` webhook: enough to decide later, nothing more. */
export interface LabeledCommand {
  installationId: number;
  owner: string;
  repo: string;
  /** The repository's default branch when the label was added: the base unless the config names one. */
  defaultBranch: string;
  issue: { number: number; title: string; body: string };
  label: string;
  sender: string;
}
