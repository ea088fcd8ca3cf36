import type { CommandGesture } from "../commands/gesture.ts";
import { parseCommand } from "../commands/parse-command.ts";
import { isBot, isLisaPullRequest, type PullRequestPayloadPart, type Triage } from "./payload-filters.ts";

interface ReviewCommentPayload {
  action: string;
  installation?: { id: number };
  repository: { name: string; full_name: string; owner: { login: string } };
  pull_request: PullRequestPayloadPart;
  comment: {
    id: number;
    pull_request_review_id?: number | null;
    body: string;
    path: string;
    line?: number | null;
    original_line?: number | null;
    diff_hunk?: string;
    in_reply_to_id?: number;
    html_url?: string;
    created_at?: string;
    user: { login: string; type?: string } | null;
  };
  sender: { login: string; type: string };
}

/**
 * Turns a `/lisa` command written as an inline comment on one of Lisa's pull requests into a
 * gesture that carries the thread's place in the diff. Inline comments without a command are
 * picked up later, by a redirect on the PR or a changes-requested review.
 */
export function onPullRequestReviewComment(payload: ReviewCommentPayload): Triage<CommandGesture> {
  if (payload.action !== "created") return { ignored: `review comment ${payload.action}` };
  if (!payload.installation) return { ignored: "not delivered to an installation" };
  if (isBot(payload.sender) || isBot(payload.comment.user)) return { ignored: "comment by a bot" };
  if (!isLisaPullRequest(payload.pull_request, payload.repository)) return { ignored: "not one of Lisa's pull requests" };
  const command = parseCommand(payload.comment.body);
  if (!command) return { ignored: "not a /lisa command" };
  const { comment } = payload;
  return {
    key: `review_comment:${comment.id}`,
    command: {
      kind: "command",
      installationId: payload.installation.id,
      owner: payload.repository.owner.login,
      repo: payload.repository.name,
      number: payload.pull_request.number,
      isPullRequest: true,
      sender: payload.sender.login,
      command,
      where: "inline",
      commentId: comment.id,
      reviewId: comment.pull_request_review_id ?? null,
      url: comment.html_url ?? null,
      createdAt: comment.created_at ?? new Date(0).toISOString(),
      inline: {
        path: comment.path,
        line: comment.line ?? comment.original_line ?? null,
        diffHunk: comment.diff_hunk ?? "",
        inReplyTo: comment.in_reply_to_id ?? null,
        outdated: comment.line === null,
      },
    },
  };
}
