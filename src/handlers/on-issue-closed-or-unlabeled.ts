import type { IssueGesture } from "../commands/gesture.ts";
import { isBot, type Triage } from "./payload-filters.ts";

interface IssueChangePayload {
  action: string;
  installation?: { id: number };
  repository: { id?: number; name: string; owner: { login: string } };
  issue: { number: number; pull_request?: unknown; updated_at?: string };
  label?: { name: string };
  sender: { login: string; type: string };
}

/**
 * Turns a label taken off an issue, or an issue closed, into a gesture (docs/operations.md). Bots never stop
 * Lisa (Lisa swaps its own state labels all the time); whether the label is Lisa's, the sender a
 * writer and the run under way is the worker's to decide.
 */
export function onIssueClosedOrUnlabeled(payload: IssueChangePayload): Triage<IssueGesture> {
  if (payload.action !== "unlabeled" && payload.action !== "closed") return { ignored: `issues ${payload.action}` };
  if (!payload.installation) return { ignored: "not delivered to an installation" };
  if (isBot(payload.sender)) return { ignored: `sender ${payload.sender.login} is a bot` };
  // A pull request's labels come as pull_request events, but the filter costs nothing.
  if (payload.issue.pull_request) return { ignored: "a pull request, not an issue" };
  const label = payload.action === "unlabeled" ? (payload.label?.name ?? null) : null;
  if (payload.action === "unlabeled" && label === null) return { ignored: "no label in payload" };
  const repo = payload.repository.id ?? `${payload.repository.owner.login}/${payload.repository.name}`;
  return {
    // The change itself (its time), so a redelivery under a new delivery id stops nothing twice.
    key: `issue:${repo}:${payload.issue.number}:${payload.action}:${label ?? ""}:${payload.issue.updated_at ?? ""}`,
    command: {
      kind: "issue",
      installationId: payload.installation.id,
      owner: payload.repository.owner.login,
      repo: payload.repository.name,
      number: payload.issue.number,
      isPullRequest: false,
      sender: payload.sender.login,
      action: payload.action,
      label,
    },
  };
}
