import type { Triage } from "./on-issue-labeled.ts";

/** A `/lisa <command> [text]` comment, as the worker needs it. */
export interface CommentCommand {
  installationId: number;
  owner: string;
  repo: string;
  /** The issue or pull request the comment is on. */
  number: number;
  isPullRequest: boolean;
  /** Lower-cased command word, e.g. `retry`; empty for a bare `/lisa`. */
  name: string;
  /** The rest of the comment after the command word. */
  text: string;
  sender: string;
}

interface CommentPayload {
  action: string;
  installation?: { id: number };
  repository: { name: string; owner: { login: string } };
  issue: { number: number; pull_request?: unknown };
  comment: { body: string; user: { type?: string } | null };
  sender: { login: string; type: string };
}

/** A command starts a line of the comment: `/lisa retry`, `/lisa redirect use the v2 API`. */
const COMMAND = /^\/lisa(?:[ \t]+([a-z-]+))?[ \t]*([\s\S]*)$/im;

/**
 * Turns an `issue_comment.created` payload into a command for Lisa, or says why it is none.
 * Comments by bots, Lisa's own included, are never commands.
 */
export function onIssueComment(payload: CommentPayload): Triage<CommentCommand> {
  if (payload.action !== "created") return { ignored: `comment ${payload.action}` };
  if (!payload.installation) return { ignored: "not delivered to an installation" };
  if (payload.sender.type === "Bot" || payload.comment.user?.type === "Bot") return { ignored: "comment by a bot" };
  const match = COMMAND.exec(payload.comment.body.replace(/\r\n/g, "\n"));
  if (!match) return { ignored: "not a /lisa command" };
  return {
    command: {
      installationId: payload.installation.id,
      owner: payload.repository.owner.login,
      repo: payload.repository.name,
      number: payload.issue.number,
      isPullRequest: Boolean(payload.issue.pull_request),
      name: (match[1] ?? "").toLowerCase(),
      text: (match[2] ?? "").trim(),
      sender: payload.sender.login,
    },
  };
}
