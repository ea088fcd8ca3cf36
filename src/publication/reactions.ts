import type { GitHubReader, RepoRef } from "../github/github-port.ts";
import { publisherOf } from "../github/github-publisher.ts";

// The acknowledgements: 👀 on a label or a command the moment Lisa takes it, 🚀 on a retry queued.

/** Reacts to the issue (or pull request) itself. */
export const reactToIssue = (gh: GitHubReader, ref: RepoRef, issue: number, content: "eyes" | "rocket"): Promise<void> =>
  publisherOf(gh).addReaction(ref, issue, content);

/** Reacts to a comment: one in the conversation (`issue`) or on a line of the diff (`review`). */
export const reactToComment = (
  gh: GitHubReader,
  ref: RepoRef,
  commentId: number,
  kind: "issue" | "review",
  content: "eyes" | "rocket" | "+1",
): Promise<void> => publisherOf(gh).addCommentReaction(ref, commentId, kind, content);
