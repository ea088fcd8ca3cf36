import type { CommandGesture, ReviewGesture } from "../commands/gesture.ts";
import { parseCommand } from "../commands/parse-command.ts";
import { isBot, isLisaPullRequest, type PullRequestPayloadPart, type Triage } from "./payload-filters.ts";

interface ReviewPayload {
  action: string;
  installation?: { id: number };
  repository: { name: string; full_name: string; owner: { login: string } };
  pull_request: PullRequestPayloadPart;
  review: {
    id: number;
    body: string | null;
    state: string;
    commit_id?: string | null;
    html_url?: string;
    submitted_at?: string | null;
    user: { login: string; type?: string } | null;
  };
  sender: { login: string; type: string };
}

/**
 * Turns a `pull_request_review` payload (submitted or dismissed) on one of Lisa's pull requests
 * into a gesture: a `/lisa` command in the body wins over the review's state.
 */
export function onPullRequestReview(payload: ReviewPayload): Triage<CommandGesture | ReviewGesture> {
  if (payload.action !== "submitted" && payload.action !== "dismissed") return { ignored: `review ${payload.action}` };
  if (!payload.installation) return { ignored: "not delivered to an installation" };
  if (!isLisaPullRequest(payload.pull_request, payload.repository)) return { ignored: "not one of Lisa's pull requests" };
  const origin = {
    installationId: payload.installation.id,
    owner: payload.repository.owner.login,
    repo: payload.repository.name,
    number: payload.pull_request.number,
    isPullRequest: true,
  };
  const key = `review:${payload.review.id}:${payload.action}`;
  if (payload.action === "dismissed") {
    // Whoever GitHub names as the sender (a person, or Lisa's own push with stale-dismissal on), re-evaluate.
    return {
      key,
      command: {
        kind: "review",
        ...origin,
        sender: payload.sender.login,
        action: "dismissed",
        state: "dismissed",
        ...(payload.review.user?.login ? { reviewer: payload.review.user.login } : {}),
        reviewId: payload.review.id,
        commitId: payload.review.commit_id ?? null,
        body: "",
        url: payload.review.html_url ?? null,
      },
    };
  }
  if (isBot(payload.sender) || isBot(payload.review.user)) return { ignored: "review by a bot" };
  const body = payload.review.body ?? "";
  const command = parseCommand(body);
  if (command) {
    return {
      key,
      command: {
        kind: "command",
        ...origin,
        sender: payload.sender.login,
        command,
        where: "review",
        commentId: null,
        reviewId: payload.review.id,
        url: payload.review.html_url ?? null,
        createdAt: payload.review.submitted_at ?? new Date(0).toISOString(),
      },
    };
  }
  const state = payload.review.state.toLowerCase();
  if (state !== "approved" && state !== "changes_requested") return { ignored: `a ${state} review without a command` };
  return {
    key,
    command: {
      kind: "review",
      ...origin,
      sender: payload.sender.login,
      action: "submitted",
      state,
      reviewId: payload.review.id,
      commitId: payload.review.commit_id ?? null,
      body,
      url: payload.review.html_url ?? null,
    },
  };
}
