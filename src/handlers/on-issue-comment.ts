import type { CommandGesture } from "../commands/gesture.ts";
import { parseCommand } from "../commands/parse-command.ts";
import { isBot, type Triage } from "./payload-filters.ts";

interface CommentPayload {
  action: string;
  installation?: { id: number };
  repository: { name: string; owner: { login: string } };
  issue: { number: number; pull_request?: unknown };
  comment: { id?: number; body: string; html_url?: string; created_at?: string; user: { login?: string; type?: string } | null };
  sender: { login: string; type: string };
}

/**
 * Turns an `issue_comment.created` payload into a command for Lisa, or says why it is none.
 * Comments by bots, Lisa's own included, are never commands.
 */
export function onIssueComment(payload: CommentPayload): Triage<CommandGesture> {
  if (payload.action !== "created") return { ignored: `comment ${payload.action}` };
  if (!payload.installation) return { ignored: "not delivered to an installation" };
  if (isBot(payload.sender) || payload.comment.user?.type === "Bot") return { ignored: "comment by a bot" };
  const command = parseCommand(payload.comment.body);
  if (!command) return { ignored: "not a /lisa command" };
  return {
    key: `comment:${payload.comment.id ?? "?"}`,
    command: {
      kind: "command",
      installationId: payload.installation.id,
      owner: payload.repository.owner.login,
      repo: payload.repository.name,
      number: payload.issue.number,
      isPullRequest: Boolean(payload.issue.pull_request),
      sender: payload.sender.login,
      command,
      where: "comment",
      commentId: payload.comment.id ?? null,
      reviewId: null,
      url: payload.comment.html_url ?? null,
      createdAt: payload.comment.created_at ?? new Date(0).toISOString(),
    },
  };
}
