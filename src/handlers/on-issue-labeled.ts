import type { LabeledCommand } from "../commands/gesture.ts";
import { isBot, type Triage } from "./payload-filters.ts";

interface LabeledPayload {
  installation?: { id: number };
  repository: { id?: number; name: string; default_branch: string; owner: { login: string } };
  issue: { number: number; title: string; body?: string | null; pull_request?: unknown; updated_at?: string };
  label?: { name: string };
  sender: { login: string; type: string };
}

/**
 * Turns an `issues.labeled` payload into a command, or says why it is none of Lisa's business.
 * Bots (Lisa included) never trigger a run. Whether the label is Lisa's and the sender may use it
 * is decided by the worker, which needs the repository's config and GitHub's answer for that.
 */
export function onIssueLabeled(payload: LabeledPayload): Triage<LabeledCommand> {
  if (!payload.installation) return { ignored: "not delivered to an installation" };
  if (!payload.label) return { ignored: "no label in payload" };
  if (isBot(payload.sender)) return { ignored: `sender ${payload.sender.login} is a bot` };
  // GitHub sends issues.labeled for pull requests too; Lisa works on issues.
  if (payload.issue.pull_request) return { ignored: "labeled a pull request, not an issue" };
  return {
    // The label event itself, so the same event redelivered under a new delivery id starts nothing.
    key: `labeled:${payload.repository.id ?? `${payload.repository.owner.login}/${payload.repository.name}`}:${payload.issue.number}:${payload.label.name}:${payload.issue.updated_at ?? ""}`,
    command: {
      installationId: payload.installation.id,
      owner: payload.repository.owner.login,
      repo: payload.repository.name,
      defaultBranch: payload.repository.default_branch,
      issue: { number: payload.issue.number, title: payload.issue.title, body: payload.issue.body ?? "" },
      label: payload.label.name,
      sender: payload.sender.login,
    },
  };
}
