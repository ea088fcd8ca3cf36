import type { PullRequestGesture } from "../commands/gesture.ts";
import { isBot, isLisaPullRequest, type PullRequestPayloadPart, type Triage } from "./payload-filters.ts";

interface PullRequestPayload {
  action: string;
  installation?: { id: number };
  repository: { name: string; full_name: string; owner: { login: string } };
  pull_request: PullRequestPayloadPart & { id: number; merged?: boolean | null; updated_at?: string };
  before?: string;
  after?: string;
  sender: { login: string; type: string };
}

const ACTIONS = new Set(["closed", "reopened", "synchronize"]);

/**
 * Turns a close, merge, reopen or human push on one of Lisa's pull requests into a gesture. Lisa's
 * own pushes (a bot's `synchronize`) are known already; closes and merges count whoever did them.
 */
export function onPullRequest(payload: PullRequestPayload): Triage<PullRequestGesture> {
  if (!ACTIONS.has(payload.action)) return { ignored: `pull_request ${payload.action}` };
  if (!payload.installation) return { ignored: "not delivered to an installation" };
  if (!isLisaPullRequest(payload.pull_request, payload.repository)) return { ignored: "not one of Lisa's pull requests" };
  if (payload.action === "synchronize" && isBot(payload.sender)) return { ignored: "Lisa's own push" };
  const pr = payload.pull_request;
  return {
    // A push is its new head; a close or reopen is its time, so closing the same head twice is two events.
    key: `pull_request:${pr.id}:${payload.action}:${payload.action === "synchronize" ? payload.after : (pr.updated_at ?? "")}`,
    command: {
      kind: "pull_request",
      installationId: payload.installation.id,
      owner: payload.repository.owner.login,
      repo: payload.repository.name,
      number: pr.number,
      isPullRequest: true,
      sender: payload.sender.login,
      action: payload.action as PullRequestGesture["action"],
      merged: Boolean(pr.merged),
      before: payload.before ?? null,
      after: payload.after ?? pr.head.sha,
    },
  };
}
